// The modes, rules and hooks of a loaded configuration as text tables, for `cortexd modes`.
import Table from 'cli-table3';
import type { LoadedConfig } from '../src/config/schema.js';

const plain = { style: { head: [], border: [] } };

/** Renders the converted (multi-mode) form of a configuration as text tables. */
export function renderModes(loaded: LoadedConfig): string {
  const { config } = loaded;
  const lines: string[] = [];
  lines.push(`configuration: ${loaded.configName}${loaded.legacy ? ' (converted from a single-mode file)' : ''}`);
  lines.push(
    `default mode: ${config.default_mode}   manual switching: ${config.allow_manual_switching ? 'allowed' : 'off'}   mode memory: ${config.mode_memory_enabled ? 'on' : 'off'}`,
  );

  const modes = new Table({ head: ['mode', 'name', 'hertz', 'timeout', 'inputs', 'actions', 'model', 'hooks'], ...plain });
  for (const [name, m] of Object.entries(config.modes)) {
    modes.push([
      name === config.default_mode ? `${name} *` : name,
      m.display_name,
      String(m.hertz),
      m.timeout_seconds === undefined ? '-' : `${m.timeout_seconds}s`,
      m.agent_inputs.map((i) => i.type).join(', ') || '-',
      m.agent_actions.map((a) => `${a.llm_label}:${a.connector}`).join(', ') || '-',
      m.cortex_llm.type,
      String(m.lifecycle_hooks.length),
    ]);
  }
  lines.push(modes.toString());

  if (config.transition_rules.length > 0) {
    const rules = new Table({ head: ['#', 'from', 'to', 'type', 'trigger', 'priority', 'cooldown'], ...plain });
    config.transition_rules.forEach((r, i) => {
      const trigger =
        r.transition_type === 'input_triggered'
          ? r.trigger_keywords.join(', ')
          : r.transition_type === 'context_aware'
            ? JSON.stringify(r.context_conditions)
            : r.transition_type === 'time_based'
              ? `after ${r.timeout_seconds ?? config.modes[r.from_mode]?.timeout_seconds ?? '?'}s`
              : 'manual';
      rules.push([
        String(i),
        r.from_mode,
        r.to_mode,
        r.transition_type,
        trigger,
        String(r.priority),
        r.cooldown_seconds === undefined ? '-' : `${r.cooldown_seconds}s`,
      ]);
    });
    lines.push('transition rules:', rules.toString());
  } else {
    lines.push('transition rules: none');
  }

  const hooks = new Table({ head: ['where', 'event', 'handler', 'priority', 'async', 'timeout', 'on failure'], ...plain });
  const addHooks = (where: string, list: LoadedConfig['config']['global_lifecycle_hooks']) => {
    for (const h of list) {
      const cfg = h.handler_config as Record<string, unknown>;
      const what = String(cfg[h.handler_type] ?? cfg.action_type ?? '');
      hooks.push([
        where,
        h.hook_type,
        `${h.handler_type}: ${what.length > 40 ? `${what.slice(0, 37)}...` : what}`,
        String(h.priority),
        h.async_execution ? 'yes' : 'no',
        `${h.timeout_seconds}s`,
        h.on_failure,
      ]);
    }
  };
  addHooks('(global)', config.global_lifecycle_hooks);
  for (const [name, m] of Object.entries(config.modes)) addHooks(name, m.lifecycle_hooks);
  lines.push(hooks.length > 0 ? `lifecycle hooks:\n${hooks.toString()}` : 'lifecycle hooks: none');
  return lines.join('\n');
}
