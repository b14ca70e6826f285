// What WebSim tells the page about the configuration: modes, manual switching, and the config with every secret removed.
import type { AgentControl } from '../cortex/contracts.js';
import { redactDeep } from '../redact.js';
import type { SimMeta } from './page/state.js';

const MASK = '[REDACTED]';

/**
 * The configuration as the page may see it. On top of `redactDeep` (secret field names and secret
 * shapes in every string), every value of a tool server's `env` and `headers` is masked whatever its
 * name, since those maps routinely hold credentials under arbitrary names.
 */
export function redactedConfig(config: AgentControl['config']): unknown {
  const copy = redactDeep(config) as { modes?: Record<string, { mcp_servers?: Array<Record<string, unknown>> }> };
  for (const mode of Object.values(copy.modes ?? {})) {
    for (const server of mode.mcp_servers ?? []) {
      for (const field of ['env', 'headers'] as const) {
        const map = server[field];
        if (map && typeof map === 'object') server[field] = Object.fromEntries(Object.keys(map).map((k) => [k, MASK]));
      }
    }
  }
  return copy;
}

/** The unchanging facts the page needs: names, modes, and whether (and why not) the switch buttons work. */
export function buildMeta(agent: AgentControl): SimMeta {
  const c = agent.config;
  return {
    configName: agent.configName,
    name: c.name,
    default_mode: c.default_mode,
    allow_manual_switching: c.allow_manual_switching,
    manual_disabled_reason: c.allow_manual_switching ? null : `manual switching is off: allow_manual_switching is false in ${agent.configName}`,
    modes: Object.entries(c.modes).map(([name, m]) => ({ name, display_name: m.display_name, description: m.description })),
    config: redactedConfig(c),
  };
}
