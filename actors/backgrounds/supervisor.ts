// The backgrounds of a mode: context producers, supervised and restarted on the reconnect policy, their health on the bus.
// The actor is `backgrounds`: each background is its child `background:<type>`, and a background's device session a child `device:<name>` of that.
import type { Logger } from 'pino';
import { assign, enqueueActions, fromCallback, sendParent, setup, stopChild, type AnyActorRef } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import type { InputContext, InputPlugin } from '../../src/cortex/input.js';
import { describeError } from '../../src/errors.js';
import { DEFAULT_RESTART, restartText, runFailed, runHealthy, runStarted, supervisedContext, type Restarts, type RestartSettings } from '../restart.js';
import { ActorServices } from '../actor-services.js';
import { streamSessionLogic, type SessionInput } from '../streams/session-machine.js';
import { relayDeviceSession } from '../streams/device-session.js';

/** Builds a fresh plugin of the background with the callback it publishes context through. */
export type BackgroundCreate = (callbacks: Pick<InputContext, 'publishContext'>) => InputPlugin;

export interface BackgroundActorInput {
  /** The actor id (`background:<type>`, `#<n>` when a type repeats). */
  id: string;
  type: string;
  mode: string;
  create: BackgroundCreate;
  bus: AgentBus;
  logger: Logger;
  /** Restart backoff after a failure; the attempt count resets once it has run for `healthyMs`. */
  restart?: RestartSettings;
  /** Given the plugin's asynchronous stop, so the agent can wait for it. */
  track?: (closing: Promise<unknown>) => void;
}

/** The background's data; its services (create, bus, logger, track: its input) are kept by its logic (`ActorServices`): contexts hold data. */
interface Ctx extends Pick<BackgroundActorInput, 'id' | 'type' | 'mode' | 'restart'> {
  /** Its restarts on the reconnect policy (actors/restart.ts). */
  restarts: Restarts;
  error: string | undefined;
}

type Ev = { type: 'background.context'; values: Record<string, unknown> } | { type: 'background.error'; error: string; fatal: boolean };

/** Events a background sends up (the supervisor relays them to the mode, which gives them to its mode machine). */
export type BackgroundParentEvent = { type: 'context.update'; values: Record<string, unknown> };

/** Says `stopped` on the bus when the background stops (exit actions do not run when an actor is stopped). */
const stoppedReport = fromCallback<{ type: 'none' }, Pick<BackgroundActorInput, 'bus' | 'mode' | 'type'>>(
  ({ input }) =>
    () =>
      input.bus.emit({ type: 'background', at: Date.now(), mode: input.mode, background: input.type, state: 'stopped' }),
);

/** What one background's `running` made: its plugin, or why it could not be made. */
type Made = { plugin: InputPlugin; error?: undefined } | { plugin?: undefined; error: string };

/** The system id of a background's device session (`mode:<mode>/<background id>/device`): found without walking children. */
const deviceSystemId = (ctx: Pick<Ctx, 'mode' | 'id'>): string => `mode:${ctx.mode}/${ctx.id}/device`;

/**
 * Subscribes the plugin's source while the background runs: what it reads only feeds the context
 * values it publishes (its text is never a prompt line and never wakes the model). A plugin that
 * could not be made, a source that fails or ends: `background.error`. Leaving stops the plugin.
 * A plugin with a device (a serial GPS or battery board) has its session spawned by the background as
 * its child `device:<name>` (as an input's is); this relays it: its states go on the bus as an
 * input's do (`stream` events of the device's kind), and a `<kind>.failed` is a `background.error`.
 */
const produce = fromCallback<
  { type: 'none' },
  Pick<BackgroundActorInput, 'type' | 'logger' | 'track' | 'bus'> & { made: Made | undefined; device: () => AnyActorRef | undefined }
>(({ input, sendBack }) => {
  const plugin = input.made?.plugin;
  if (!plugin) {
    sendBack({ type: 'background.error', error: `not started: ${input.made?.error ?? 'unknown error'}`, fatal: true } satisfies Ev);
    return () => {};
  }
  const device = plugin.device;
  const session = device ? input.device() : undefined;
  const relay =
    session && device
      ? relayDeviceSession(
          session,
          {
            type: plugin.type,
            device: {
              kind: device.kind,
              onEvent: (e) => {
                device.onEvent(e);
                if (e.type === `${device.kind}.failed`)
                  sendBack({ type: 'background.error', error: `${device.name}: ${String(e.reason)}`, fatal: false } satisfies Ev);
              },
            },
          },
          input.bus,
        )
      : undefined;
  const sub = plugin.listen().subscribe({
    // The plugin's own reading of each event (it may publish from there); the text is not used.
    next: (raw) => {
      try {
        plugin.rawToText(raw);
      } catch (err) {
        input.logger.warn(`background ${input.type}: could not read an event: ${describeError(err)}`);
      }
    },
    error: (err: unknown) => sendBack({ type: 'background.error', error: describeError(err), fatal: false } satisfies Ev),
    complete: () => sendBack({ type: 'background.error', error: 'its source has no more data', fatal: false } satisfies Ev),
  });
  return () => {
    sub.unsubscribe();
    relay?.unsubscribe();
    const closing = plugin.stop().catch((err: unknown) => input.logger.warn(`stopping background ${input.type}: ${describeError(err)}`));
    input.track?.(closing);
  };
});

type Health = 'running' | 'restarting' | 'failed';

/** Says a background's health on the bus (and a failure in the log). */
function reportHealth(context: Ctx, { logger, bus }: Pick<BackgroundActorInput, 'logger' | 'bus'>, state: Health): void {
  if (state === 'restarting' || state === 'failed')
    logger.warn(`background ${context.type} failed: ${context.error}${state === 'restarting' ? `; ${restartText(context.restarts)}` : ''}`);
  bus.emit({
    type: 'background',
    at: Date.now(),
    mode: context.mode,
    background: context.type,
    state,
    ...(state === 'restarting' || state === 'failed' ? { error: context.error ?? 'unknown error' } : {}),
    ...(state === 'restarting' ? { retry_in_ms: context.restarts.nextDelayMs } : {}),
  });
}

/** A fresh plugin of the background, publishing its context values to the background actor; or why it could not be made. */
function makePlugin(input: BackgroundActorInput, self: AnyActorRef): Made {
  try {
    return {
      plugin: input.create({ publishContext: (values) => self.send({ type: 'background.context', values } satisfies Ev) }),
    };
  } catch (err) {
    return { error: describeError(err) };
  }
}

/**
 * One background: `running` (tag `running`) makes a fresh plugin on entry, spawns its device session
 * (child `device:<name>`, stopped on exit) and produces; a failure goes to `restarting` (the one
 * reconnect policy, actors/restart.ts: its backoff, attempts reset after `healthyMs` of running, and its breaker) and runs again with a new plugin; a
 * plugin that cannot be made goes to `failed`. Each state is a `background` event on the bus. The
 * plugin is this actor's own (a closure table by actor, never its context: contexts hold data).
 */
function backgroundMachine() {
  const made = new WeakMap<AnyActorRef, Made>();
  const services = new ActorServices<BackgroundActorInput>();
  return setup({
    types: { context: {} as Ctx, events: {} as Ev, input: {} as BackgroundActorInput },
    actors: { produce, stoppedReport, deviceSession: streamSessionLogic() },
    delays: {
      restartDelay: ({ context }) => context.restarts.nextDelayMs,
      healthy: ({ context }) => (context.restart ?? DEFAULT_RESTART).healthyMs,
    },
    actions: {
      health: ({ context, self }, params: { state: Health }) => reportHealth(context, services.of(self), params.state),
      // Made while the entry resolves (an enqueueActions body runs in order; a plain action runs after the invoke's input is read).
      make: enqueueActions(({ context, enqueue, self }) => {
        const m = makePlugin(services.of(self), self);
        made.set(self, m);
        const device = m.plugin?.device;
        if (device)
          enqueue.spawnChild('deviceSession', { id: `device:${device.name}`, systemId: deviceSystemId(context), input: device.input as SessionInput });
      }),
    },
  }).createMachine({
    id: 'background',
    context: ({ input, self }) => {
      services.keep(self, input);
      return supervisedContext(input);
    },
    initial: 'running',
    invoke: { src: 'stoppedReport', input: ({ context, self }) => ({ bus: services.of(self).bus, mode: context.mode, type: context.type }) },
    on: {
      'background.context': {
        actions: [
          // On the bus too: readers of the bus (WebSim, the fleet's state) see what the rules see.
          ({ context, event, self }) =>
            services.of(self).bus.emit({ type: 'context', at: Date.now(), source: `background.${context.type}`, values: event.values }),
          sendParent(({ event }) => ({ type: 'context.update', values: event.values }) satisfies BackgroundParentEvent),
        ],
      },
    },
    states: {
      running: {
        tags: ['running'],
        entry: [{ type: 'health', params: { state: 'running' } }, 'make', assign(({ context }) => ({ restarts: runStarted(context.restarts) }))],
        exit: [stopChild('device:serial'), stopChild('device:microphone'), stopChild('device:camera'), ({ self }) => made.delete(self)],
        invoke: {
          src: 'produce',
          input: ({ context, self }) => {
            const { logger, track, bus } = services.of(self);
            const device = () => self.system.get(deviceSystemId(context)) as AnyActorRef | undefined;
            return { made: made.get(self), device, type: context.type, logger, bus, ...(track ? { track } : {}) };
          },
        },
        after: { healthy: { actions: assign(({ context }) => ({ restarts: runHealthy(context.restarts) })) } },
        on: {
          'background.error': [
            { guard: ({ event }) => event.fatal, target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
            {
              target: 'restarting',
              actions: assign(({ context, event }) => ({ error: event.error, restarts: runFailed(context.restarts, context.restart) })),
            },
          ],
        },
      },
      restarting: {
        tags: ['restarting'],
        entry: { type: 'health', params: { state: 'restarting' } },
        after: { restartDelay: 'running' },
      },
      failed: { tags: ['failed'], entry: { type: 'health', params: { state: 'failed' } } },
    },
  });
}

/**
 * The supervisor of a mode's backgrounds (`backgrounds`): invokes one `background:<type>` child per
 * entry for as long as it runs (the mode's `running` state) and relays their context values to the
 * mode. A child that fails never stops its siblings or the mode. (Invokes are static in XState: the
 * machine is built for its list.)
 */
export function backgroundsLogic(backgrounds: BackgroundActorInput[]) {
  return setup({
    types: { events: {} as BackgroundParentEvent },
    actors: { background: backgroundMachine() },
  }).createMachine({
    id: 'backgrounds',
    on: { 'context.update': { actions: sendParent(({ event }) => event) } },
    invoke: backgrounds.map((b) => ({ id: b.id, src: 'background' as const, input: b })),
  });
}

/** The inspector ids of a mode's backgrounds: `background:<type>`, with `#<n>` (from 2) when a type repeats. */
export function backgroundIds(types: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return types.map((type) => {
    const n = (seen.get(type) ?? 0) + 1;
    seen.set(type, n);
    return types.filter((t) => t === type).length > 1 ? `background:${type}#${n}` : `background:${type}`;
  });
}
