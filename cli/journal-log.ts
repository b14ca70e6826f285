// Under systemd's journal, where there is no view: the agent's start, mode changes and stop as log records.
import type { Subscription } from 'rxjs';
import type { AgentBus } from '../src/cortex/events.js';
import type { Logger } from '../src/log.js';

/**
 * Logs what the view's first and last lines say, so `journalctl -u cortexd@NAME` shows when the agent
 * started, in which mode, each mode change with its trigger, and how it stopped. Everything else the
 * log says already (warnings, hooks, sockets).
 */
export function attachJournalLog(bus: AgentBus, logger: Logger): Subscription {
  return bus.events$.subscribe((e) => {
    if (e.type === 'agent.started') logger.info({ config: e.config, mode: e.mode }, `agent ${e.config} started in mode ${e.mode}`);
    else if (e.type === 'mode.changed') logger.info({ from: e.from, to: e.to, trigger: e.trigger }, `mode ${e.from} -> ${e.to} (${e.trigger}: ${e.reason})`);
    else if (e.type === 'agent.stopped') logger.info({ code: e.code }, `stopped (exit ${e.code})`);
  });
}
