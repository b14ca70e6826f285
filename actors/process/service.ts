// The `service` actor of the process root: opens the service of one configuration after the agent starts, holds it, closes it when stopped
// It opens at the agent's first tick, its first call or a time limit, whichever comes first (serviceMachine); the embedded service starts in-process.
import { fromCallback, fromPromise, sendParent, setup } from 'xstate';
import type { Logger } from 'pino';
import { deferredCloud, type DeferredCloud } from '../../src/cloud/deferred.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import type { ServiceConnection } from '../../src/cortex/embedded.js';
import { describeError } from '../../src/errors.js';
import { bounded } from './bounded.js';

/**
 * The client agents get for one service connection before it is open (src/cloud/deferred.ts), and
 * how its first call asks the waiting actor to start. Made by the root as it spawns the actor.
 */
export interface ServiceLink {
  key: string;
  deferred: DeferredCloud;
  /** A call came before the actor started waiting: it starts at once. */
  used: boolean;
  /** Set while the actor waits: starts it now. */
  startNow: (() => void) | undefined;
}

/** A link for a service actor about to be spawned, whose key is `key`: its client's first call starts the actor if it still waits. */
export function serviceLink(key: string): ServiceLink {
  const link: ServiceLink = {
    key,
    used: false,
    startNow: undefined,
    deferred: deferredCloud(() => {
      link.used = true;
      link.startNow?.();
    }),
  };
  return link;
}

/** Where the open connection lives: in the closure of the process root (the agent gets its client from there), never in a context. */
export interface ServiceHolder {
  /** The configuration whose service is wanted now. */
  wanted(): LoadedConfig;
  connect(loaded: LoadedConfig): Promise<ServiceConnection>;
  logger: Logger;
  service: ServiceConnection | undefined;
  /** The link of the newest service actor (the one being spawned, then running). */
  link: ServiceLink | undefined;
  /** Settles when the previous connection closed (at most 2 s after it was asked to): the next one opens after it. */
  serviceClosed: Promise<void>;
}

/** What a service connection depends on: a reloaded configuration that changes it gets a new one. */
export const serviceKey = (l: LoadedConfig) => JSON.stringify([l.configName, l.addresses, l.apiKey]);

/**
 * Longest the service waits for the agent's first tick or first call: start-up hooks that take longer
 * than this do not delay it further.
 */
export const SERVICE_START_WAIT_MS = 3000;

/** `service.linked`: the actor runs (waiting), so agents may be given its client; then `service.up` or `service.failed`. */
export type ServiceReport = { type: 'service.linked' } | { type: 'service.up' } | { type: 'service.failed'; message: string };

/**
 * waiting -> connecting -> up (held until stopped) | failed; tells the root `service.linked` as it
 * starts, then `service.up` or `service.failed`. The service opens after the agent's first tick (the
 * root sends `service.start` when it hears `agent.ticked`), at the agent's first call to it, or after
 * SERVICE_START_WAIT_MS, whichever comes first, so its start stays out of the first tick's way;
 * calls made before it is up wait for it and go in their order. Stopped before it is up, its
 * waiting calls fail with that reason, and a connection that opens after the stop is closed.
 */
// long: the named actors and actions stay in one setup() table, where XState types them against the machine's context and events.
export function serviceMachine(h: ServiceHolder) {
  return setup({
    types: {
      context: {} as { config: string; embedded: boolean | null },
      input: {} as { config: string },
      events: {} as { type: 'service.start' },
    },
    actors: {
      // The link of this actor, for its whole life: a stop before the service was up fails whatever still waits for it, with why.
      own: fromCallback<{ type: 'service.start' }, { config: string }>(({ input }) => {
        const link = h.link;
        return () => link?.deferred.reject(new Error(`the service of ${input.config} was stopped before it was up`));
      }),
      wait: fromCallback(({ sendBack }) => {
        const link = h.link;
        const go = () => sendBack({ type: 'service.start' });
        if (!link || link.used) {
          go();
          return () => {};
        }
        link.startNow = go;
        const timer = setTimeout(go, SERVICE_START_WAIT_MS);
        return () => {
          clearTimeout(timer);
          link.startNow = undefined;
        };
      }),
      connect: fromPromise<{ embedded: boolean }>(async ({ signal }) => {
        const wanted = h.wanted();
        const link = h.link;
        await h.serviceClosed;
        if (signal.aborted) throw new Error('stopped before connecting');
        const attempt = h.connect(wanted);
        attempt.catch((err: unknown) => link?.deferred.reject(new Error(`cannot start the service: ${describeError(err)}`)));
        // Until this attempt settled (and, when the actor was stopped meanwhile, its connection closed),
        // the service is not closed: the process ends after that, leaving no server or database open.
        h.serviceClosed = attempt.then(
          (conn) => (signal.aborted ? bounded('service', conn.close(), 2000, h.logger) : undefined),
          () => undefined,
        );
        const conn = await attempt;
        if (signal.aborted) throw new Error('stopped while connecting');
        h.service = conn;
        link?.deferred.resolve(conn.cloud);
        return { embedded: conn.embedded !== undefined };
      }),
      hold: fromCallback(() => {
        const conn = h.service;
        return () => {
          if (!conn) return;
          if (h.service === conn) h.service = undefined;
          h.serviceClosed = bounded('service', conn.close(), 2000, h.logger);
        };
      }),
    },
  }).createMachine({
    id: 'service',
    context: ({ input }) => ({ config: input.config, embedded: null }),
    invoke: { src: 'own', input: ({ context }) => ({ config: context.config }) },
    entry: sendParent({ type: 'service.linked' } satisfies ServiceReport),
    initial: 'waiting',
    states: {
      waiting: {
        tags: ['waiting'],
        invoke: { src: 'wait' },
        on: { 'service.start': 'connecting' },
      },
      connecting: {
        invoke: {
          src: 'connect',
          onDone: { target: 'up', actions: sendParent({ type: 'service.up' } satisfies ServiceReport) },
          onError: {
            target: 'failed',
            actions: sendParent(({ event }): ServiceReport => ({ type: 'service.failed', message: `cannot start the service: ${describeError(event.error)}` })),
          },
        },
      },
      up: { tags: ['up'], invoke: { src: 'hold' } },
      failed: {},
    },
  });
}
