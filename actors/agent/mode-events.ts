// Translates what the mode machine emits (mode changes, refusals, hook runs, timeouts) into agent bus events.
import type { AnyActorRef } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import type { ModeEmitted } from '../modes/types.js';

/** What the agent's handle follows of the mode machine: the mode it is in, and whether that mode runs. */
export interface ModeFollower {
  onChanged: (mode: string) => void;
  onRunning: (running: boolean) => void;
}

type Of<T extends ModeEmitted['type']> = Extract<ModeEmitted, { type: T }>;

/**
 * Listens to the mode actor (before or after it starts): every emitted event goes on the bus, and
 * the mode changes and runs reach `follow`. The subscriptions end with the actor.
 */
export function wireModeEvents(ref: AnyActorRef, bus: AgentBus, follow: ModeFollower): void {
  const at = () => Date.now();
  ref.on('mode.ready', () => follow.onRunning(true));
  ref.on('mode.left', () => follow.onRunning(false));
  ref.on('mode.changed', (e: Of<'mode.changed'>) => {
    follow.onChanged(e.to);
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
  ref.subscribe({ complete: () => follow.onRunning(false), error: () => follow.onRunning(false) });
}
