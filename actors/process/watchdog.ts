// The `watchdog` actor of the process root: sd_notify READY at the first tick, then WATCHDOG pings while the loop ticks
// It also sends STATUS at each mode change, and STOPPING when told.
import { assign, fromCallback, sendParent, sendTo, setup } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import type { Notifier } from '../../src/systemd/notify.js';
import { Watchdog } from '../../src/systemd/watchdog.js';

export interface WatchdogDeps {
  bus: AgentBus;
  notifier: Notifier;
}

/** The hertz of every mode of a configuration and its start mode: what "the loop ticked recently" is measured against. */
export interface Rates {
  hertz: Record<string, number>;
  mode: string;
}

/** From the root: a new generation starts (its rates), or the process is stopping (the status systemd shows). */
export type WatchdogCommand = ({ type: 'watchdog.generation' } & Rates) | { type: 'watchdog.stopping'; status: string };

type Followed = { type: 'tick.first'; mode: string } | { type: 'mode.seen'; mode: string };

/**
 * `follow` (a callback child) owns the Watchdog timer and the bus subscription: the first tick of
 * the process sends READY and starts the pings (each one only while the last tick is within three
 * periods of the current mode, at least 10 s); the first tick of each generation is told to the root
 * as `agent.ticked` (a reload that never ticks falls back to the previous configuration).
 */
export function watchdogMachine(deps: WatchdogDeps) {
  return setup({
    types: {
      context: {} as { rates: Rates; ready: boolean; mode: string | null; stopping: boolean },
      events: {} as WatchdogCommand | Followed,
      input: {} as Rates,
    },
    actors: {
      follow: fromCallback<WatchdogCommand, Rates>(({ input, sendBack, receive }) => {
        let hertz = input.hertz;
        let periodMs = 1000 / (hertz[input.mode] ?? 1);
        let lastTick = Date.now();
        let ready = false;
        let ticked = false;
        const dog = new Watchdog(deps.notifier, { healthy: () => Date.now() - lastTick < Math.max(3 * periodMs, 10_000) });
        const sub = deps.bus.events$.subscribe((e) => {
          if (e.type === 'tick') {
            lastTick = Date.now();
            if (!ready) {
              ready = true;
              void deps.notifier.ready(`mode ${e.mode}`);
              dog.start();
            }
            if (!ticked) {
              ticked = true;
              sendBack({ type: 'tick.first', mode: e.mode });
            }
          } else if (e.type === 'mode.changed') {
            periodMs = 1000 / (hertz[e.to] ?? 1);
            lastTick = Date.now();
            void deps.notifier.status(`mode ${e.to}`);
            sendBack({ type: 'mode.seen', mode: e.to });
          }
        });
        receive((e) => {
          if (e.type === 'watchdog.generation') {
            hertz = e.hertz;
            periodMs = 1000 / (hertz[e.mode] ?? 1);
            lastTick = Date.now();
            ticked = false;
          } else void deps.notifier.stopping(e.status);
        });
        return () => {
          sub.unsubscribe();
          dog.stop();
        };
      }),
    },
  }).createMachine({
    id: 'watchdog',
    context: ({ input }) => ({ rates: input, ready: false, mode: null, stopping: false }),
    invoke: { id: 'follow', src: 'follow', input: ({ context }) => context.rates },
    on: {
      'tick.first': { actions: [assign({ ready: true, mode: ({ event }) => event.mode }), sendParent({ type: 'agent.ticked' })] },
      'mode.seen': { actions: assign({ mode: ({ event }) => event.mode }) },
      'watchdog.generation': {
        actions: [assign({ rates: ({ event }) => ({ hertz: event.hertz, mode: event.mode }) }), sendTo('follow', ({ event }) => event)],
      },
      'watchdog.stopping': { actions: [assign({ stopping: true }), sendTo('follow', ({ event }) => event)] },
    },
  });
}
