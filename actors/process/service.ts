// The `service` actor of the process root: opens the service of one configuration (the embedded one starts in-process), holds it, closes it when stopped.
import { fromCallback, fromPromise, sendParent, setup } from 'xstate';
import type { Logger } from 'pino';
import type { LoadedConfig } from '../../src/config/schema.js';
import type { ServiceConnection } from '../../src/cortex/embedded.js';
import { describeError } from '../../src/errors.js';
import { bounded } from './bounded.js';

/** Where the open connection lives: in the closure of the process root (the agent gets its client from there), never in a context. */
export interface ServiceHolder {
  /** The configuration whose service is wanted now. */
  wanted(): LoadedConfig;
  connect(loaded: LoadedConfig): Promise<ServiceConnection>;
  logger: Logger;
  service: ServiceConnection | undefined;
  serviceFor: string | undefined;
  /** Settles when the previous connection closed (at most 2 s after it was asked to): the next one opens after it. */
  serviceClosed: Promise<void>;
}

/** What a service connection depends on: a reloaded configuration that changes it gets a new one. */
export const serviceKey = (l: LoadedConfig) => JSON.stringify([l.configName, l.addresses, l.apiKey]);

export type ServiceReport = { type: 'service.up' } | { type: 'service.failed'; message: string };

/** connecting -> up (held until stopped) | failed; tells the root `service.up` or `service.failed`. */
export function serviceMachine(h: ServiceHolder) {
  return setup({
    types: { context: {} as { config: string; embedded: boolean | null }, input: {} as { config: string } },
    actors: {
      connect: fromPromise<{ embedded: boolean }>(async ({ signal }) => {
        const wanted = h.wanted();
        await h.serviceClosed;
        const conn = await h.connect(wanted);
        if (signal.aborted) {
          h.serviceClosed = bounded('service', conn.close(), 2000, h.logger);
          throw new Error('stopped while connecting');
        }
        h.service = conn;
        h.serviceFor = serviceKey(wanted);
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
    initial: 'connecting',
    states: {
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
