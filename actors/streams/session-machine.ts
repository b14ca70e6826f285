// The session machine of every connection and device (connecting, streaming, backingOff, failed, stopped) on src/backoff.ts's reconnect policy.
import {
  assign,
  emit,
  enqueueActions,
  fromCallback,
  fromPromise,
  sendTo,
  setup,
  type ActorRefFrom,
  type AnyActorRef,
  type DoneActorEvent,
  type EventObject,
} from 'xstate';
import {
  INITIAL_RECONNECT,
  connectionHealthy,
  connectionOpened,
  planReconnect,
  reconnectOptions,
  type ReconnectKind,
  type ReconnectOptions,
  type ReconnectState,
} from '../../src/backoff.js';
import type { StreamState } from '../../src/cortex/events.js';
import { describeError } from '../../src/errors.js';
import type { LinkConnector, LinkEvent, StreamLink } from '../../src/cloud/link.js';
import { ActorServices } from '../actor-services.js';

/** Close code of a policy violation (RFC 6455): the server refuses us (revoked key, no balance); retrying would hammer it. */
export const POLICY_VIOLATION = 1008;

export interface SessionTiming {
  connectTimeoutMs: number;
  /** Period of the keepalive hook and of the `<prefix>.stats` check while streaming. */
  keepaliveMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A connection open this long counts as healthy even if the server said nothing yet. */
  healthyAfterMs: number;
  /** Quick failures in a row (closed before healthy) that open the breaker. */
  breakerThreshold: number;
  /** First wait of the open breaker before its probe; doubles per failed probe up to breakerMaxMs. */
  breakerInitialMs: number;
  breakerMaxMs: number;
  /** A healthy connection that dropped is replaced at once, but never sooner than this after it opened. */
  minCycleMs: number;
  /** Failures in a row without a healthy connection after which the session stops in `failed`; unset: never (a device's `max_restarts`). */
  giveUpAfter?: number;
  /** What those failures lacked, said in the reason when it gives up (default "before it was healthy"; a microphone: "with no audio"). */
  giveUpWhat?: string;
}

/** The longest timer Node keeps (ms): as `healthyAfterMs`, a connection is healthy only once it says so (a message), never by time. */
export const HEALTHY_ONLY_BY_MESSAGE_MS = 2 ** 31 - 1;

export const DEFAULT_TIMING: SessionTiming = {
  connectTimeoutMs: 10_000,
  keepaliveMs: 5_000,
  backoffInitialMs: 500,
  backoffMaxMs: 10_000,
  healthyAfterMs: 1_000,
  breakerThreshold: 5,
  breakerInitialMs: 2_000,
  breakerMaxMs: 20_000,
  minCycleMs: 1_000,
};

/** Cumulative data-plane counters of a stream, since it started (snake_case: they go on the bus as they are). */
export interface StreamCounters {
  /** Audio bytes handed to sockets (ASR). */
  sent_bytes?: number;
  /** Audio bytes dropped because the reconnect ring was full (ASR). */
  dropped_bytes?: number;
  /** Frames handed to sockets (VLM). */
  frames_sent?: number;
  /** Frames dropped: replaced by a newer one, skipped by the encoder, or offered with no socket open (VLM). */
  frames_dropped?: number;
  /** CU the audio sent so far costs at the recognizer's price (ASR; the service meters the same bytes). */
  cost_cu?: number;
}

/** What the machine asks of its owner (ASR or VLM): how to react to a link and its messages. */
export interface SessionHooks {
  /** Called on entry to streaming with the open link (attach the data pipeline). */
  attach(link: StreamLink): void;
  /** Called on exit from streaming (detach the pipeline; data waits or is dropped per its policy). */
  detach(): void;
  /** Called every keepaliveMs while streaming. */
  keepalive(link: StreamLink): void;
  /** Maps a server message to events to emit (e.g. asr.final); a string return is a fatal reason. */
  onMessage(message: unknown): Array<{ type: string; [k: string]: unknown }> | string;
  /** True when a close with this code/reason ends a good session normally (e.g. the silence timeout): reconnect at once. */
  isBenignClose(code: number, reason: string): boolean;
  /** The data plane's counters, copied into every state event. */
  counters?(): StreamCounters;
  /** Called with every `<prefix>.state` event as it is emitted (owners outside the tree's listeners: the fleet channel, MCP's bus events). */
  state?(event: SessionStateEvent): void;
}

export interface SessionInput {
  connect: LinkConnector;
  hooks: SessionHooks;
  timing?: Partial<SessionTiming>;
  /** Event-name prefix of emitted events: `asr` or `vlm`. */
  prefix: string;
  random?: () => number;
  /** Clock of the reconnect policy (tests pass the simulated clock's). */
  now?: () => number;
}

/**
 * `<prefix>.state`, emitted on entry to every state (and, as `<prefix>.stats` with state `streaming`,
 * when the counters changed since the last event, checked every keepaliveMs while streaming).
 */
export interface SessionStateEvent extends StreamCounters {
  type: string;
  state: StreamState;
  /** Number of this connection attempt since the last healthy connection (1: first try, or a reconnect after a healthy one). */
  attempt: number;
  /** backingOff: the wait before `attempt`. */
  delay_ms?: number;
  /** connecting (a reconnect), backingOff, failed: why, in words an operator can act on. */
  reason?: string;
  /** backingOff: true when the breaker is open (too many connections died before they were healthy). */
  breaker?: boolean;
  /** connecting: a reconnect after a close that ends a good session normally (the server's silence timeout): routine, not trouble. */
  routine?: boolean;
  /** Connections opened since the stream started. */
  connections: number;
}

type Emitted = { type: string; [k: string]: unknown };

interface Plan {
  kind: ReconnectKind;
  delayMs: number;
  attempt: number;
  /** It follows a benign close (the session ended normally). */
  routine: boolean;
}

/**
 * Data only (`--inspect` shows it as it is). The connector, the hooks and the clock are the
 * actor's `input` (`services.of(self)`); the open link lives in the `session` child that owns it.
 */
interface Ctx {
  timing: SessionTiming;
  policy: ReconnectOptions;
  prefix: string;
  reconnect: ReconnectState;
  plan: Plan | undefined;
  /** Why the last connection ended or failed; the fatal reason once failed. */
  reason: string | undefined;
  connections: number;
  /** JSON of the counters last emitted (the stats check emits only on change). */
  lastCounters: string;
}

type Ev =
  | { type: 'link.event'; event: LinkEvent }
  | { type: 'link.fatal'; reason: string }
  /** The session child ran the keepalive hook: the counters now include what it sent. */
  | { type: 'link.kept' }
  | { type: 'stop' };

/** What the `session` child is told while the machine streams. */
type SessionCommand = { type: 'keepalive' };

/** The services of the sessions of one logic: each one's input (connector, hooks, clock), by actor. */
type Services = ActorServices<SessionInput>;

/** The link the `connect` child opened: the output of its done event, the only event that enters `streaming`. */
const openedLink = (event: EventObject): StreamLink => (event as DoneActorEvent<StreamLink>).output;

function isFatalConnectError(err: unknown): boolean {
  return Boolean(err && typeof err === 'object' && (err as { fatal?: unknown }).fatal === true);
}

function closeOf(event: Ev): { code: number; reason: string } | undefined {
  return event.type === 'link.event' && event.event.type === 'close' ? event.event : undefined;
}

/** A close the link marked as one retrying cannot cure (MQTT: refused credentials, a banned client). */
function fatalCloseOf(event: Ev): string | undefined {
  const close = closeOf(event) as { reason: string; fatal?: boolean } | undefined;
  return close?.fatal === true ? close.reason : undefined;
}

function closeText(close: { code: number; reason: string }): string {
  // 1006 never carries a reason on a WebSocket: a reason with it is a non-WebSocket link's own words (MQTT, MCP).
  if (close.code === 1006 && close.reason) return close.reason;
  return `socket closed (${close.code}${close.reason ? ` ${close.reason}` : ''})`;
}

function stateEvent(context: Ctx, hooks: SessionHooks, state: StreamState, extra: Partial<SessionStateEvent> = {}): Emitted {
  const event: SessionStateEvent = {
    type: `${context.prefix}.state`,
    state,
    attempt: context.reconnect.attempt,
    connections: context.connections,
    ...hooks.counters?.(),
    ...extra,
  };
  return { ...event };
}

/** The state event, also handed to the owner's `state` hook (once per entry: emit runs this once). */
function reported(services: Services, context: Ctx, self: AnyActorRef, state: StreamState, extra: Partial<SessionStateEvent> = {}): Emitted {
  const { hooks } = services.of(self);
  const event = stateEvent(context, hooks, state, extra);
  hooks.state?.(event as unknown as SessionStateEvent);
  return event;
}

function policyOf(timing: SessionTiming): ReconnectOptions {
  return reconnectOptions({
    backoff: { initialMs: timing.backoffInitialMs, maxMs: timing.backoffMaxMs },
    healthyAfterMs: timing.healthyAfterMs,
    breakerThreshold: timing.breakerThreshold,
    breakerInitialMs: timing.breakerInitialMs,
    breakerMaxMs: timing.breakerMaxMs,
    minCycleMs: timing.minCycleMs,
    ...(timing.giveUpAfter !== undefined ? { giveUpAfter: timing.giveUpAfter } : {}),
  });
}

/** The reason of giving up: the failures in a row and the last one's reason (whose source, such as `microphone: `, stays first). */
function giveUpReason(context: Ctx): string {
  const last = (context.reason ?? 'unknown error').replace(/^connect failed: /, '');
  const source = /^([a-z][\w-]*): /i.exec(last)?.[0] ?? '';
  const n = context.plan?.attempt ?? 0;
  return `${source}gave up restarting (${n} failure${n === 1 ? '' : 's'} in a row ${context.timing.giveUpWhat ?? 'before it was healthy'}): ${last.slice(source.length)}`;
}

// long: one statechart, its setup() table and its states typed together by XState; when to reconnect is src/backoff.ts's plan.
export function streamSessionLogic() {
  const services: Services = new ActorServices();
  return setup({
    types: {
      context: {} as Ctx,
      events: {} as Ev,
      input: {} as SessionInput,
      emitted: {} as Emitted,
    },
    actors: {
      connect: fromPromise<StreamLink, { connect: LinkConnector }>(({ input, signal }) => input.connect(signal)),
      /**
       * Owns an open link for as long as the machine streams: listens to it, attaches the data pipeline,
       * runs the keepalive hook on it when told, and on stop (state exit, or the parent stopping this
       * machine) detaches and closes it.
       */
      session: fromCallback<SessionCommand, { link: StreamLink; hooks: SessionHooks }, Ev>(({ input, sendBack, receive }) => {
        const unsubscribe = input.link.subscribe((event) => sendBack({ type: 'link.event', event }));
        input.hooks.attach(input.link);
        receive(() => {
          input.hooks.keepalive(input.link);
          sendBack({ type: 'link.kept' });
        });
        return () => {
          unsubscribe();
          input.hooks.detach();
          input.link.close(1000, 'client closing');
        };
      }),
    },
    delays: {
      connectTimeout: ({ context }) => context.timing.connectTimeoutMs,
      keepalive: ({ context }) => context.timing.keepaliveMs,
      healthyAfter: ({ context }) => context.timing.healthyAfterMs,
      retryDelay: ({ context }) => context.plan?.delayMs ?? 0,
    },
    guards: {
      fatalConnectError: ({ event }) => isFatalConnectError((event as { error?: unknown }).error),
      policyClose: ({ event }) => closeOf(event)?.code === POLICY_VIOLATION,
      fatalClose: ({ event }) => fatalCloseOf(event) !== undefined,
      isClose: ({ event }) => closeOf(event) !== undefined,
      immediate: ({ context }) => (context.plan?.delayMs ?? 0) === 0,
      gaveUp: ({ context }) => context.plan?.kind === 'give-up',
    },
    actions: {
      /** The connection attempt or the open connection ended: remember why and plan the next attempt. */
      planRetry: assign(({ context, self }, params: { reason: string; healthy?: boolean }) => {
        const { now = Date.now, random = Math.random } = services.of(self);
        const state = params.healthy ? connectionHealthy(context.reconnect) : context.reconnect;
        const plan = planReconnect(state, now(), context.policy, random);
        return {
          reconnect: plan.state,
          plan: { kind: plan.kind, delayMs: plan.delayMs, attempt: plan.attempt, routine: params.healthy === true },
          reason: params.reason,
        };
      }),
      markHealthy: assign(({ context }) => ({ reconnect: connectionHealthy(context.reconnect) })),
      emitStats: enqueueActions(({ context, self, enqueue }) => {
        const { hooks } = services.of(self);
        const counters = hooks.counters?.();
        if (!counters) return;
        const text = JSON.stringify(counters);
        if (text === context.lastCounters) return;
        enqueue.assign({ lastCounters: text });
        enqueue.emit({ ...stateEvent(context, hooks, 'streaming'), type: `${context.prefix}.stats` });
      }),
      rememberCounters: assign(({ self }) => ({ lastCounters: JSON.stringify(services.of(self).hooks.counters?.() ?? {}) })),
    },
  }).createMachine({
    id: 'streamSession',
    context: ({ input, self }) => {
      services.keep(self, input);
      const timing = { ...DEFAULT_TIMING, ...input.timing };
      return {
        timing,
        policy: policyOf(timing),
        prefix: input.prefix,
        reconnect: { ...INITIAL_RECONNECT },
        plan: undefined,
        reason: undefined,
        connections: 0,
        lastCounters: '',
      };
    },
    initial: 'connecting',
    on: { stop: '.stopped' },
    states: {
      connecting: {
        tags: ['retrying'],
        entry: [
          emit(({ context, self }) =>
            reported(
              services,
              context,
              self,
              'connecting',
              context.plan && context.reason
                ? {
                    reason: context.plan.kind === 'reconnect' ? `reconnecting at once: ${context.reason}` : context.reason,
                    ...(context.plan.kind === 'reconnect' && context.plan.routine ? { routine: true } : {}),
                  }
                : {},
            ),
          ),
          'rememberCounters',
        ],
        invoke: {
          id: 'connect',
          src: 'connect',
          input: ({ self }) => ({ connect: services.of(self).connect }),
          onDone: {
            target: 'streaming',
            actions: assign(({ context, self }) => ({
              reconnect: connectionOpened(context.reconnect, (services.of(self).now ?? Date.now)()),
              connections: context.connections + 1,
            })),
          },
          onError: [
            { guard: 'fatalConnectError', target: 'failed', actions: assign(({ event }) => ({ reason: describeError(event.error) })) },
            { target: 'planning', actions: { type: 'planRetry', params: ({ event }) => ({ reason: `connect failed: ${describeError(event.error)}` }) } },
          ],
        },
        after: {
          connectTimeout: {
            target: 'planning',
            actions: { type: 'planRetry', params: ({ context }) => ({ reason: `no connection within ${context.timing.connectTimeoutMs} ms` }) },
          },
        },
      },
      streaming: {
        tags: ['streaming'],
        type: 'parallel',
        entry: [emit(({ context, self }) => reported(services, context, self, 'streaming')), 'rememberCounters'],
        // Entered only from the connect actor's done event: its output is the open link, handed to the child that owns it.
        invoke: {
          id: 'link',
          src: 'session',
          input: ({ event, self }) => ({ link: openedLink(event), hooks: services.of(self).hooks }),
        },
        states: {
          health: {
            initial: 'probation',
            states: {
              // Healthy after healthyAfterMs open, or as soon as the link said something (a message marks it).
              probation: {
                always: { guard: ({ context }) => context.reconnect.healthy, target: 'healthy' },
                after: { healthyAfter: { target: 'healthy', actions: 'markHealthy' } },
              },
              healthy: { tags: ['healthy'] },
            },
          },
          tick: {
            initial: 'live',
            states: {
              live: {
                after: {
                  keepalive: {
                    target: 'live',
                    reenter: true,
                    actions: sendTo('link', { type: 'keepalive' } satisfies SessionCommand),
                  },
                },
              },
            },
          },
        },
        on: {
          'link.event': [
            { guard: 'fatalClose', target: 'failed', actions: assign(({ event }) => ({ reason: fatalCloseOf(event) })) },
            {
              guard: 'policyClose',
              target: 'failed',
              actions: assign(({ event }) => ({ reason: `server closed with policy violation: ${closeOf(event)?.reason ?? ''}` })),
            },
            {
              guard: 'isClose',
              target: 'planning',
              actions: enqueueActions(({ context, event, self, enqueue }) => {
                const close = closeOf(event)!;
                const benign = services.of(self).hooks.isBenignClose(close.code, close.reason);
                enqueue.emit({ type: `${context.prefix}.closed`, code: close.code, reason: close.reason, benign });
                enqueue({ type: 'planRetry', params: { reason: closeText(close), healthy: benign } });
              }),
            },
            {
              actions: enqueueActions(({ context, event, self, enqueue }) => {
                if (event.event.type === 'invalid') {
                  enqueue.emit({ type: `${context.prefix}.invalid`, reason: event.event.reason });
                  return;
                }
                if (event.event.type !== 'message') return;
                if (!context.reconnect.healthy) enqueue('markHealthy');
                const out = services.of(self).hooks.onMessage(event.event.message);
                if (typeof out === 'string') enqueue.raise({ type: 'link.fatal', reason: out });
                else for (const e of out) enqueue.emit(e);
              }),
            },
          ],
          'link.fatal': { target: 'failed', actions: assign(({ event }) => ({ reason: event.reason })) },
          'link.kept': { actions: 'emitStats' },
        },
      },
      /** Transient: a zero wait goes straight back to connecting, any other wait through backingOff. */
      planning: {
        always: [
          { guard: 'gaveUp', target: 'failed', actions: assign(({ context }) => ({ reason: giveUpReason(context) })) },
          { guard: 'immediate', target: 'connecting' },
          { target: 'backingOff' },
        ],
      },
      backingOff: {
        tags: ['retrying'],
        entry: emit(({ context, self }) => {
          const plan = context.plan!;
          const breaker = plan.kind === 'breaker';
          const why = context.reason ?? 'connection lost';
          const reason = breaker
            ? `${why}; ${context.reconnect.quickFailures} connections in a row closed before they were healthy: breaker open, probing again in ${(plan.delayMs / 1000).toFixed(1)} s`
            : why;
          return reported(services, context, self, 'backingOff', {
            attempt: plan.attempt,
            delay_ms: plan.delayMs,
            reason,
            ...(breaker ? { breaker: true } : {}),
          });
        }),
        after: { retryDelay: 'connecting' },
      },
      failed: {
        type: 'final',
        tags: ['final'],
        entry: [
          emit(({ context, self }) => reported(services, context, self, 'failed', { reason: context.reason ?? 'unknown error' })),
          emit(({ context }) => ({ type: `${context.prefix}.failed`, reason: context.reason ?? 'unknown error' })),
        ],
      },
      stopped: {
        type: 'final',
        tags: ['final'],
        entry: emit(({ context, self }) => reported(services, context, self, 'stopped', { reason: 'stopped' })),
      },
    },
  });
}

/** The session machine's logic (one per `streamSessionLogic()` call). */
export type StreamSessionLogic = ReturnType<typeof streamSessionLogic>;
export type StreamSessionActor = ActorRefFrom<StreamSessionLogic>;
