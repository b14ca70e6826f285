// One input of a mode as an XState actor (`input:<type>`): its plugin's listen, its session actors as children, and restarts with the backoff.
import type { Logger } from 'pino';
import { assign, enqueueActions, fromCallback, sendParent, setup, stopChild, type AnyActorRef } from 'xstate';
import type { AgentBus, StreamKind } from '../../src/cortex/events.js';
import type { InputContext, InputMessage, InputPlugin } from '../../src/cortex/input.js';
import { describeError } from '../../src/errors.js';
import { DEFAULT_RESTART, restartText, runFailed, runHealthy, runStarted, supervisedContext, type Restarts, type RestartSettings } from '../restart.js';
import { streamSessionLogic, type SessionInput } from '../streams/session-machine.js';
import { forwardStreamEvents, toStreamEvent } from '../streams/stream-event.js';
import { relayDeviceSession } from '../streams/device-session.js';
import { ActorServices } from '../actor-services.js';

/** What the loop reads of a listening input: its plugin (formatted buffer). Its finals go to the loop as events. */
export interface InputSlot {
  id: string;
  type: string;
  plugin: InputPlugin;
}

/** Builds a fresh plugin instance with the callbacks the input actor gives it. */
export type InputCreate = (callbacks: Pick<InputContext, 'publishContext'>) => InputPlugin;

export interface InputActorInput {
  /** The actor id (`input:<type>` or `input:<type>#<n>`). */
  id: string;
  type: string;
  mode: string;
  create: InputCreate;
  bus: AgentBus;
  logger: Logger;
  /** Restart backoff after a failure; the attempt count resets once the input has listened for `healthyMs`. */
  restart?: RestartSettings;
  /** Given the plugin's asynchronous stop, so the agent can wait for it. */
  track?: (closing: Promise<unknown>) => void;
}

/**
 * The input actor's data. Its services (create, bus, logger, track: its input) and the plugin it made
 * are kept by its logic per actor (`ActorServices`, `InputLogic.slotOf`).
 */
interface Ctx extends Pick<InputActorInput, 'id' | 'type' | 'mode' | 'restart'> {
  /** A plugin was made on entering `listening` (false: `error` says why). */
  made: boolean;
  /** The plugin has a socket session (its own retry layer). */
  streamed: boolean;
  /** Its restarts on the reconnect policy (actors/restart.ts). */
  restarts: Restarts;
  error: string | undefined;
}

type Ev =
  | { type: 'input.raw'; message: InputMessage }
  | { type: 'input.error'; error: string; fatal?: boolean }
  | { type: 'input.ended' }
  | { type: 'input.text'; text: string }
  | { type: 'input.context'; values: Record<string, unknown> };

/** Events the input actor sends its parent (the mode actor). */
export type InputParentEvent =
  | { type: 'input.message'; id: string; final: boolean; text: string }
  | { type: 'context.update'; values: Record<string, unknown> };

/** An error that retrying cannot cure (a refused key, a policy close): marked `fatal: true` by whoever throws it. */
function isFatal(err: unknown): boolean {
  return Boolean(err && typeof err === 'object' && (err as { fatal?: unknown }).fatal === true);
}

/**
 * Subscribes the plugin's raw stream for as long as it runs; every raw event is converted to text
 * once (`rawToText`, which also buffers it for the prompt) and reported. The cleanup (the actor
 * leaving `listening`, or stopping) unsubscribes, which releases the device or socket, and stops the plugin.
 */
const listen = fromCallback<
  { type: 'none' },
  {
    slot: InputSlot | undefined;
    logger: Logger;
    bus: AgentBus;
    track?: (p: Promise<unknown>) => void;
    stream: () => AnyActorRef | undefined;
    device: () => AnyActorRef | undefined;
  }
>(({ input, sendBack }) => {
  // No plugin: `listening` leaves for `failed` at once.
  if (!input.slot) return () => {};
  const { plugin } = input.slot;
  /** One raw event, converted once (`rawToText` also buffers it for the prompt) and reported. */
  const deliver = (raw: unknown) => {
    try {
      const message = plugin.rawToText(raw);
      if (message) sendBack({ type: 'input.raw', message } satisfies Ev);
    } catch (err) {
      sendBack({ type: 'input.error', error: `could not read an event: ${describeError(err)}` } satisfies Ev);
    }
  };
  // The session child was spawned on entry: what it emits goes to the plugin (states, replies), a raw
  // event the plugin makes of it (a transcript) is reported here at once, and its states and counters
  // go to the bus as `stream` events, starting with the state it is in.
  const session = plugin.stream ? input.stream() : undefined;
  const kind = plugin.stream?.kind ?? 'asr';
  const relay = session?.on('*', (e: { type: string }) => {
    const raw = plugin.stream!.onEvent(e);
    if (raw !== undefined) deliver(raw);
  });
  const forward = session ? forwardStreamEvents(session, kind, plugin.type, (e) => input.bus.emit(e)) : undefined;
  if (session) {
    // The session was spawned in this same step and starts in `connecting` (its connect is a promise, so it
    // cannot have left it yet): its first state event went out before this listener, so it is said here.
    const first = toStreamEvent(kind, plugin.type, { state: 'connecting', attempt: 0 });
    if (first) input.bus.emit(first);
    plugin.stream!.onEvent({ type: `${kind}.state`, state: 'connecting' });
  }
  // The device's session child (the microphone's recorder, a camera), spawned on entry like the stream's: its events go to the plugin, its states to the bus.
  const deviceSession = plugin.device ? input.device() : undefined;
  const device = deviceSession ? relayDeviceSession(deviceSession, { type: plugin.type, device: plugin.device! }, input.bus) : undefined;
  // Failures the device recovers from itself (its own backoff) still reach the bus.
  const failures = plugin.deviceFailures$?.subscribe((f) =>
    input.bus.emit({
      type: 'error',
      at: Date.now(),
      source: `input.${plugin.type}`,
      message: `${f.message}${f.retryInMs !== undefined ? `; the device is reopened in ${f.retryInMs} ms` : ''}`,
    }),
  );
  // The states of a device session run outside the tree (the local vision worker's camera): on the bus as a child's would be.
  let remoteKind: StreamKind | undefined;
  const remote = plugin.deviceStates$?.subscribe(({ kind, state }) => {
    remoteKind = kind;
    const event = toStreamEvent(kind, plugin.type, state);
    if (event) input.bus.emit(event);
  });
  const sub = plugin.listen().subscribe({
    next: deliver,
    error: (err: unknown) => sendBack({ type: 'input.error', error: describeError(err), fatal: isFatal(err) } satisfies Ev),
    complete: () => sendBack({ type: 'input.ended' } satisfies Ev),
  });
  return () => {
    failures?.unsubscribe();
    remote?.unsubscribe();
    if (remoteKind) input.bus.emit({ type: 'stream', at: Date.now(), kind: remoteKind, input: plugin.type, state: 'stopped' });
    device?.unsubscribe();
    relay?.unsubscribe();
    forward?.unsubscribe();
    // The session stops with the input (a stopped actor emits nothing more): say so on the bus.
    if (session) input.bus.emit({ type: 'stream', at: Date.now(), kind, input: plugin.type, state: 'stopped' });
    sub.unsubscribe();
    const closing = plugin.stop().catch((err: unknown) => input.logger.warn(`stopping input ${plugin.type}: ${describeError(err)}`));
    input.track?.(closing);
  };
});

/** The services of one logic's input actors (create, bus, logger, track): each one's input, by actor. */
type Services = ActorServices<InputActorInput>;

/** The context of a new input actor: its names and restart policy, no plugin yet; its services are kept by its logic. */
function inputContext(svc: Services, { input, self }: { input: InputActorInput; self: AnyActorRef }): Ctx {
  svc.keep(self, input);
  return { ...supervisedContext(input), made: false, streamed: false };
}

/** Makes a fresh plugin on entering `listening` and keeps it in the actor's slot; a plugin that cannot be made leaves `made` false and why. */
function makePlugin(slots: Slots, svc: Services, context: Ctx, self: AnyActorRef): Partial<Ctx> {
  try {
    const plugin = svc.of(self).create({
      publishContext: (values) => self.send({ type: 'input.context', values }),
    });
    slots.set(self, { slot: { id: context.id, type: context.type, plugin }, listening: true });
    return { made: true, streamed: plugin.stream !== undefined, error: undefined };
  } catch (err) {
    slots.set(self, { slot: undefined, listening: true });
    return { made: false, streamed: false, error: describeError(err) };
  }
}

/** The session children the plugin needs: its socket session (`stream:<kind>`) and its device's (`device:<name>`). */
function sessionChildren(slots: Slots, context: Ctx, self: AnyActorRef): { id: string; systemId: string; input: SessionInput }[] {
  const plugin = slots.get(self)?.slot?.plugin;
  const children: { id: string; systemId: string; input: SessionInput }[] = [];
  if (plugin?.stream) children.push({ id: `stream:${plugin.stream.kind}`, systemId: streamSystemId(context), input: plugin.stream.input as SessionInput });
  if (plugin?.device) children.push({ id: `device:${plugin.device.name}`, systemId: deviceSystemId(context), input: plugin.device.input as SessionInput });
  return children;
}

/** What the `listen` child is given: the plugin's slot, the services, and where its session children are found. */
function sourceInput(slots: Slots, svc: Services, context: Ctx, self: AnyActorRef) {
  const { logger, bus, track } = svc.of(self);
  const slot = slots.get(self)?.slot;
  return {
    slot,
    logger,
    bus,
    ...(track ? { track } : {}),
    stream: () => (slot?.plugin.stream ? (self.system.get(streamSystemId(context)) as AnyActorRef | undefined) : undefined),
    device: () => (slot?.plugin.device ? (self.system.get(deviceSystemId(context)) as AnyActorRef | undefined) : undefined),
  };
}

/** Reports a message of the plugin on the bus as an `input` event; returns what the parent (the mode actor) is told. */
function reportMessage(slots: Slots, svc: Services, context: Ctx, message: InputMessage, self: AnyActorRef): InputParentEvent {
  const descriptor = slots.get(self)?.slot?.plugin.descriptor;
  svc.of(self).bus.emit({
    type: 'input',
    at: message.timestamp,
    mode: context.mode,
    input: context.type,
    ...(descriptor ? { descriptor } : {}),
    text: message.text,
    final: Boolean(message.final),
  });
  return { type: 'input.message', id: context.id, final: Boolean(message.final), text: message.text };
}

/** The input machine's types, children, delays, guards and named actions (its statechart is inputMachineOf's). */
function inputSetup(slots: Slots, svc: Services) {
  return setup({
    types: { context: {} as Ctx, events: {} as Ev, input: {} as InputActorInput },
    actors: { listen, stream: streamSessionLogic() },
    delays: {
      restartDelay: ({ context }) => context.restarts.nextDelayMs,
      healthy: ({ context }) => (context.restart ?? DEFAULT_RESTART).healthyMs,
    },
    guards: {
      noPlugin: ({ context }) => !context.made,
    },
    actions: {
      report: ({ context, self }, params: { message: string }) => {
        svc.of(self).logger.warn(params.message);
        svc.of(self).bus.emit({ type: 'error', at: Date.now(), source: `input.${context.type}`, message: params.message });
      },
      // On the bus too, so readers of the bus (the fleet's state: battery, position) see what rules see.
      publishContext: ({ context, event, self }) => {
        if (event.type === 'input.context') svc.of(self).bus.emit({ type: 'context', at: Date.now(), source: `input.${context.type}`, values: event.values });
      },
      notListening: ({ self }) => {
        const own = slots.get(self);
        if (own) own.listening = false;
      },
    },
  });
}

/**
 * The input statechart: `listening` (tag `listening`) makes a fresh plugin, runs its raw stream and
 * its socket session (child `stream:asr`/`stream:vlm`), and reports each message to the parent (a
 * final one wakes the loop). A failure of an input without a session actor goes to `restarting`,
 * which waits the backoff and listens again with a new plugin (an input with one is never restarted
 * here: its session actors retry, each its own resource once); a plugin that cannot be made at all, or a source that ends, goes to
 * `failed`. Every failure and restart is an `error` event on the bus; the mode goes on without it.
 */
function inputMachineOf(slots: Slots) {
  const svc: Services = new ActorServices();
  return inputSetup(slots, svc).createMachine({
    id: 'input',
    context: (a) => inputContext(svc, a),
    initial: 'listening',
    on: {
      'input.context': {
        actions: ['publishContext', sendParent(({ event }) => ({ type: 'context.update', values: event.values }) satisfies InputParentEvent)],
      },
    },
    states: {
      listening: {
        tags: ['listening'],
        entry: [
          assign(({ context, self }) => ({ ...makePlugin(slots, svc, context, self), restarts: runStarted(context.restarts) })),
          enqueueActions(({ context, enqueue, self }) => {
            for (const child of sessionChildren(slots, context, self)) enqueue.spawnChild('stream', child);
          }),
        ],
        exit: [
          stopChild('stream:asr'),
          stopChild('stream:vlm'),
          stopChild('stream:mqtt'),
          stopChild('device:microphone'),
          stopChild('device:camera'),
          stopChild('device:serial'),
          'notListening',
        ],
        always: {
          guard: 'noPlugin',
          target: 'failed',
          actions: { type: 'report', params: ({ context }) => ({ message: `input ${context.type} not started: ${context.error ?? 'unknown error'}` }) },
        },
        invoke: { id: 'source', src: 'listen', input: ({ context, self }) => sourceInput(slots, svc, context, self) },
        after: { healthy: { actions: assign(({ context }) => ({ restarts: runHealthy(context.restarts) })) } },
        on: {
          'input.raw': {
            actions: enqueueActions(({ context, event, enqueue, self }) => {
              const told = reportMessage(slots, svc, context, event.message, self);
              enqueue.assign({ restarts: runHealthy(context.restarts) });
              enqueue.sendParent(told);
            }),
          },
          'input.text': { actions: ({ event, self }) => slots.get(self)?.slot?.plugin.acceptText?.(event.text) },
          'input.error': [
            {
              // One retry layer per stream: an input with a session actor (ASR, VLM, MQTT) is not restarted
              // here. Its connection is the session actor's to retry, so is its device (child `device:<name>`:
              // a microphone's recorder, a camera); an error that reaches this far is final.
              guard: ({ context, event }) => event.fatal === true || context.streamed,
              target: 'failed',
              actions: { type: 'report', params: ({ context, event }) => ({ message: `input ${context.type} stopped: ${event.error}` }) },
            },
            {
              target: 'restarting',
              actions: [
                assign(({ context, event }) => ({ error: event.error, restarts: runFailed(context.restarts, context.restart) })),
                {
                  type: 'report',
                  params: ({ context }) => ({ message: `input ${context.type} failed: ${context.error}; ${restartText(context.restarts)}` }),
                },
              ],
            },
          ],
          'input.ended': {
            target: 'failed',
            actions: { type: 'report', params: ({ context }) => ({ message: `input ${context.type} ended: its source has no more data` }) },
          },
        },
      },
      restarting: {
        tags: ['restarting'],
        after: { restartDelay: 'listening' },
      },
      failed: { tags: ['failed'] },
    },
  });
}

/** What an input logic keeps of each of its actors: the plugin it made, and whether it listens. */
type Slots = WeakMap<AnyActorRef, { slot: InputSlot | undefined; listening: boolean }>;

/** An input logic (one per mode: its actors' plugins are kept by actor, outside their contexts). */
export function inputLogic(): InputLogic {
  const slots: Slots = new WeakMap();
  return {
    logic: inputMachineOf(slots),
    slotOf: (ref) => slots.get(ref)?.slot,
    listeningSlotOf: (ref) => {
      const own = slots.get(ref);
      return own?.listening ? own.slot : undefined;
    },
  };
}

/** The input statechart, and the plugins its actors made (the loop reads their formatted buffers). */
export interface InputLogic {
  logic: ReturnType<typeof inputMachineOf>;
  /** The plugin actor `ref` made last (kept after it failed, as its context once kept it). */
  slotOf(ref: AnyActorRef): InputSlot | undefined;
  /** The plugin of actor `ref` while it listens (`listening`), else undefined. */
  listeningSlotOf(ref: AnyActorRef): InputSlot | undefined;
}

/** The system id of an input's socket session (`<mode>/<input id>/stream`): unique in the agent, so the input addresses it without walking its children. */
const streamSystemId = (ctx: Pick<Ctx, 'mode' | 'id'>): string => `mode:${ctx.mode}/${ctx.id}/stream`;

/** The system id of an input's device session (`<mode>/<input id>/device`: the microphone's recorder, a camera). */
const deviceSystemId = (ctx: Pick<Ctx, 'mode' | 'id'>): string => `mode:${ctx.mode}/${ctx.id}/device`;

/** The inspector ids of a mode's inputs: `input:<type>`, with `#<n>` (from 2) when a type repeats. */
export function inputIds(types: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return types.map((type) => {
    const n = (seen.get(type) ?? 0) + 1;
    seen.set(type, n);
    return types.filter((t) => t === type).length > 1 ? `input:${type}#${n}` : `input:${type}`;
  });
}
