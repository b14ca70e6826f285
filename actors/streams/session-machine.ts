// The one retry layer of a socket stream: connecting, streaming, backingOff, failed; timeouts, keepalive, backoff, breaker, fatal closes.
import { assign, emit, enqueueActions, fromCallback, fromPromise, setup, type ActorRefFrom } from 'xstate';
import { backoffDelay } from '../../devices/device-error.js';
import { describeError } from '../../src/errors.js';
import type { LinkConnector, LinkEvent, StreamLink } from '../../src/cloud/link.js';

/** Close code of a policy violation (RFC 6455): the server refuses us; retrying would hammer it. */
export const POLICY_VIOLATION = 1008;

export interface SessionTiming {
  connectTimeoutMs: number;
  keepaliveMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A connection that dies within this long after opening counts as a quick failure. */
  quickFailureMs: number;
  /** Quick failures in a row that trip the breaker. */
  breakerThreshold: number;
  /** Wait after the breaker trips, before trying again. */
  breakerCooldownMs: number;
}

export const DEFAULT_TIMING: SessionTiming = {
  connectTimeoutMs: 10_000,
  keepaliveMs: 5_000,
  backoffInitialMs: 500,
  backoffMaxMs: 30_000,
  quickFailureMs: 5_000,
  breakerThreshold: 5,
  breakerCooldownMs: 60_000,
};

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
  /** True when a close with this code/reason should reconnect at once, without backoff (e.g. silence timeout). */
  isBenignClose(code: number, reason: string): boolean;
}

export interface SessionInput {
  connect: LinkConnector;
  hooks: SessionHooks;
  timing?: Partial<SessionTiming>;
  /** Event-name prefix of emitted state events: `asr` or `vlm`. */
  prefix: string;
  random?: () => number;
  /** Clock for quick-failure detection (tests pass the simulated clock's). */
  now?: () => number;
}

type Emitted = { type: string; [k: string]: unknown };

interface Ctx {
  connect: LinkConnector;
  hooks: SessionHooks;
  timing: SessionTiming;
  prefix: string;
  random: () => number;
  now: () => number;
  link: StreamLink | undefined;
  attempt: number;
  quickFailures: number;
  /** When the current link opened (undefined while not streaming). */
  openedAt: number | undefined;
  nextDelayMs: number;
  lastError: string | undefined;
  connections: number;
}

type Ev =
  | { type: 'link.event'; event: LinkEvent }
  | { type: 'link.fatal'; reason: string }
  | { type: 'stop' };

function isFatalConnectError(err: unknown): boolean {
  return Boolean(err && typeof err === 'object' && (err as { fatal?: unknown }).fatal === true);
}

export const streamSessionMachine = setup({
  types: {
    context: {} as Ctx,
    events: {} as Ev,
    input: {} as SessionInput,
    emitted: {} as Emitted,
  },
  actors: {
    connect: fromPromise<StreamLink, { connect: LinkConnector }>(({ input, signal }) => input.connect(signal)),
    // Owns the open link while streaming: leaving `streaming`, or the session actor being stopped by its
    // owner (XState runs no exit actions then), detaches the data plane and closes the socket.
    listen: fromCallback<Ev, { link: StreamLink; hooks: SessionHooks }>(({ input, sendBack }) => {
      const unsubscribe = input.link.subscribe((event) => sendBack({ type: 'link.event', event }));
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
    retryDelay: ({ context }) => context.nextDelayMs,
  },
  guards: {
    fatalConnectError: ({ event }) => isFatalConnectError((event as { error?: unknown }).error),
    isClose: ({ event }) => event.type === 'link.event' && event.event.type === 'close',
    policyClose: ({ event }) => event.type === 'link.event' && event.event.type === 'close' && event.event.code === POLICY_VIOLATION,
    benignClose: ({ context, event }) =>
      event.type === 'link.event' && event.event.type === 'close' && context.hooks.isBenignClose(event.event.code, event.event.reason),
  },
  actions: {
    planRetry: assign(({ context }, params: { error: string; now: number }) => {
      const quick = context.openedAt !== undefined && params.now - context.openedAt < context.timing.quickFailureMs;
      const quickFailures = quick ? context.quickFailures + 1 : 0;
      const attempt = context.attempt + 1;
      const tripped = quickFailures >= context.timing.breakerThreshold;
      const nextDelayMs = tripped
        ? context.timing.breakerCooldownMs
        : backoffDelay(attempt, { initialMs: context.timing.backoffInitialMs, maxMs: context.timing.backoffMaxMs }, context.random);
      return { attempt, quickFailures: tripped ? 0 : quickFailures, nextDelayMs, lastError: params.error, openedAt: undefined };
    }),
  },
}).createMachine({
  id: 'streamSession',
  context: ({ input }) => ({
    connect: input.connect,
    hooks: input.hooks,
    timing: { ...DEFAULT_TIMING, ...input.timing },
    prefix: input.prefix,
    random: input.random ?? Math.random,
    now: input.now ?? Date.now,
    link: undefined,
    attempt: 0,
    quickFailures: 0,
    openedAt: undefined,
    nextDelayMs: 0,
    lastError: undefined,
    connections: 0,
  }),
  initial: 'connecting',
  on: { stop: '.stopped' },
  states: {
    connecting: {
      entry: emit(({ context }) => ({ type: `${context.prefix}.state`, state: 'connecting', attempt: context.attempt })),
      invoke: {
        id: 'connect',
        src: 'connect',
        input: ({ context }) => ({ connect: context.connect }),
        onDone: {
          target: 'streaming',
          actions: assign(({ event }) => ({ link: event.output })),
        },
        onError: [
          {
            guard: 'fatalConnectError',
            target: 'failed',
            actions: assign(({ event }) => ({ lastError: describeError(event.error) })),
          },
          {
            target: 'backingOff',
            actions: { type: 'planRetry', params: ({ context, event }) => ({ error: describeError(event.error), now: context.now() }) },
          },
        ],
      },
      after: {
        connectTimeout: {
          target: 'backingOff',
          actions: { type: 'planRetry', params: ({ context }) => ({ error: `no connection within ${context.timing.connectTimeoutMs} ms`, now: context.now() }) },
        },
      },
    },
    streaming: {
      entry: [
        assign(({ context }) => ({ openedAt: context.now(), connections: context.connections + 1 })),
        ({ context }) => context.hooks.attach(context.link!),
        emit(({ context }) => ({ type: `${context.prefix}.state`, state: 'streaming', attempt: context.attempt })),
      ],
      exit: assign({ link: undefined }),
      invoke: { id: 'link', src: 'listen', input: ({ context }) => ({ link: context.link!, hooks: context.hooks }) },
      initial: 'live',
      states: {
        live: {
          after: { keepalive: { target: 'live', reenter: true, actions: ({ context }) => context.link && context.hooks.keepalive(context.link) } },
        },
      },
      on: {
        'link.event': [
          {
            guard: 'policyClose',
            target: 'failed',
            actions: assign(({ event }) => ({ lastError: `server closed with policy violation: ${event.event.type === 'close' ? event.event.reason : ''}` })),
          },
          {
            guard: 'benignClose',
            target: 'connecting',
            actions: [
              assign({ attempt: 0, quickFailures: 0 }),
              emit(({ context, event }) => ({ type: `${context.prefix}.closed`, code: event.event.type === 'close' ? event.event.code : 0, benign: true })),
            ],
          },
          {
            guard: 'isClose',
            target: 'backingOff',
            actions: [
              emit(({ context, event }) => ({ type: `${context.prefix}.closed`, code: event.event.type === 'close' ? event.event.code : 0, benign: false })),
              {
                type: 'planRetry',
                params: ({ context, event }) => ({ error: event.event.type === 'close' ? `socket closed (${event.event.code} ${event.event.reason})` : 'closed', now: context.now() }),
              },
            ],
          },
          {
            actions: enqueueActions(({ context, event, enqueue }) => {
              if (event.event.type === 'invalid') {
                enqueue.emit({ type: `${context.prefix}.invalid`, reason: event.event.reason });
                return;
              }
              if (event.event.type !== 'message') return;
              const out = context.hooks.onMessage(event.event.message);
              if (typeof out === 'string') enqueue.raise({ type: 'link.fatal', reason: out });
              else for (const e of out) enqueue.emit(e);
            }),
          },
        ],
        'link.fatal': { target: 'failed', actions: assign(({ event }) => ({ lastError: event.reason })) },
      },
    },
    backingOff: {
      entry: emit(({ context }) => ({ type: `${context.prefix}.state`, state: 'backingOff', attempt: context.attempt, delayMs: context.nextDelayMs, error: context.lastError })),
      after: { retryDelay: 'connecting' },
    },
    failed: {
      type: 'final',
      entry: emit(({ context }) => ({ type: `${context.prefix}.failed`, reason: context.lastError ?? 'unknown error' })),
    },
    stopped: { type: 'final' },
  },
});

export type StreamSessionActor = ActorRefFrom<typeof streamSessionMachine>;
