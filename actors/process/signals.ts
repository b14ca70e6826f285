// The `signals` actor of the process root: SIGTERM and SIGINT ask the root to stop gracefully; a second signal ends the process at once.
import { assign, fromCallback, sendParent, setup } from 'xstate';

export interface SignalsDeps {
  /** A second signal: the process ends now (the CLI prints why and exits 130). */
  exitNow(signal: NodeJS.Signals): void;
}

/** Sent to the root on the first signal (`status` is what systemd is told). */
export type StopRequest = { type: 'process.stop'; reason: string; status: string };

type Heard = { type: 'signal.heard'; signal: NodeJS.Signals };

/** Listens for the signals while it runs (the handlers go with it); counts them in its context. */
export function signalsMachine(deps: SignalsDeps) {
  return setup({
    types: { context: {} as { received: number }, events: {} as Heard },
    actors: {
      listen: fromCallback(({ sendBack }) => {
        const onSignal = (signal: NodeJS.Signals) => sendBack({ type: 'signal.heard', signal });
        process.on('SIGTERM', onSignal);
        process.on('SIGINT', onSignal);
        return () => {
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
        };
      }),
    },
    actions: {
      exitNow: (_, signal: NodeJS.Signals) => deps.exitNow(signal),
      askStop: sendParent((_, signal: NodeJS.Signals): StopRequest => ({ type: 'process.stop', reason: signal, status: `stopping on ${signal}` })),
    },
  }).createMachine({
    id: 'signals',
    context: { received: 0 },
    invoke: { id: 'listen', src: 'listen' },
    on: {
      'signal.heard': [
        { guard: ({ context }) => context.received > 0, actions: { type: 'exitNow', params: ({ event }) => event.signal } },
        { actions: [assign({ received: ({ context }) => context.received + 1 }), { type: 'askStop', params: ({ event }) => event.signal }] },
      ],
    },
  });
}
