// Follows what the mode machine emits: mode changes, refusals, hook runs and timeouts become agent bus events, and the mode it is in is kept for its readers.
import type { AnyActorRef } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import type { ModeEmitted } from '../modes/types.js';

/** What the mode machine last announced: the mode it is in (`mode.changed`), and whether that mode runs (`mode.ready`, no `mode.left` since). */
export interface ModeView {
  readonly mode: string;
  readonly running: boolean;
}

type Of<T extends ModeEmitted['type']> = Extract<ModeEmitted, { type: T }>;

/**
 * Listens to the mode actor (before or after it starts): every emitted event goes on the bus, and the
 * returned view follows its mode (from `initialMode`, the one it starts in) and whether that mode runs.
 * The subscriptions end with the actor; once it ended, no mode runs.
 */
export function followModes(ref: AnyActorRef, bus: AgentBus, initialMode: string): ModeView {
  const view = { mode: initialMode, running: false };
  const at = () => Date.now();
  ref.on('mode.ready', () => (view.running = true));
  ref.on('mode.left', () => (view.running = false));
  ref.on('mode.changed', (e: Of<'mode.changed'>) => {
    view.mode = e.to;
    bus.emit({
      type: 'mode.changed',
      at: at(),
      from: e.from,
      to: e.to,
      trigger: e.trigger,
      reason: e.reason,
      ...(e.rule_index !== null && e.rule_index !== undefined ? { rule_index: e.rule_index } : {}),
    });
  });
  ref.on('mode.refused', (e: Of<'mode.refused'>) => bus.emit({ type: 'mode.refused', at: at(), requested: e.requested, reason: e.reason }));
  ref.on('mode.aborted', (e: Of<'mode.aborted'>) =>
    bus.emit({ type: 'error', at: at(), source: 'mode', message: `switch ${e.from} -> ${e.to} aborted: ${e.reason}` }),
  );
  // Every hook run (sync or async, done or failed) becomes one `hook` event; `hook.failed` repeats the
  // failures for the machine's own callers, so it is not mapped (a failure would appear twice).
  // `handler_type` carries the hook's short description (`command "echo hi"`), which starts with its type.
  ref.on('hook.run', (e: Of<'hook.run'>) =>
    bus.emit({
      type: 'hook',
      at: at(),
      mode: e.mode,
      hook_type: e.hook_type,
      handler_type: e.handler,
      ok: e.ok,
      ...(e.error !== undefined ? { error: e.error } : {}),
      ...(e.cancelled ? { cancelled: true } : {}),
      duration_ms: e.duration_ms,
    }),
  );
  ref.on('memory.warning', (e: Of<'memory.warning'>) => bus.emit({ type: 'error', at: at(), source: 'mode_memory', message: e.message }));
  ref.on('startup.failed', (e: Of<'startup.failed'>) => bus.emit({ type: 'error', at: at(), source: 'startup', message: e.reason }));
  ref.subscribe({ complete: () => (view.running = false), error: () => (view.running = false) });
  return view;
}
