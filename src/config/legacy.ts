// Conversion of a legacy single-mode configuration into the multi-mode form, done once at load.
import { formatPath } from './env.js';

/** Top-level fields of a legacy file that belong to its one mode. */
const MODE_FIELDS = [
  'hertz',
  'system_prompt_base',
  'agent_inputs',
  'agent_actions',
  'action_execution_mode',
  'backgrounds',
  'action_dependencies',
  'cortex_llm',
  'simulators',
  'mcp_servers',
  'lifecycle_hooks',
  'timeout_seconds',
  'remember_locations',
  'save_interactions',
] as const;

/** Fields copied into the mode but also kept at the top (they have a meaning there too). */
const KEPT_AT_TOP = new Set(['hertz', 'system_prompt_base', 'cortex_llm']);

/** A file without `modes` is a legacy single-mode configuration. */
export function isLegacy(raw: Record<string, unknown>): boolean {
  return !('modes' in raw);
}

/**
 * Converts a legacy configuration: one mode named after `name` (or the file's base name when
 * `name` is missing), made the default, with manual switching and mode memory off and no rules.
 * Unknown top-level fields stay at the top, where the loader reports them.
 */
export function convertLegacy(raw: Record<string, unknown>, fallbackName: string): Record<string, unknown> {
  const modeName = typeof raw.name === 'string' && raw.name.length > 0 ? raw.name : fallbackName;
  const mode: Record<string, unknown> = {
    display_name: modeName,
    description: `Single mode converted from a legacy configuration`,
  };
  const top: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if ((MODE_FIELDS as readonly string[]).includes(key)) {
      mode[key] = value;
      if (KEPT_AT_TOP.has(key)) top[key] = value;
    } else {
      top[key] = value;
    }
  }
  return {
    ...top,
    default_mode: modeName,
    allow_manual_switching: false,
    mode_memory_enabled: false,
    modes: { [modeName]: mode },
    transition_rules: [],
  };
}

/**
 * Maps a path of the converted form back to the file as written: `modes.<name>.agent_inputs[0].type`
 * is `agent_inputs[0].type` in a legacy file. Paths outside the one mode's fields are unchanged.
 */
export function legacyFilePath(path: string, modeName: string): string {
  const prefix = formatPath(['modes', modeName]);
  if (!path.startsWith(prefix)) return path;
  const m = /^\.([A-Za-z_][A-Za-z0-9_]*)(?=$|[.[])/.exec(path.slice(prefix.length));
  return m && (MODE_FIELDS as readonly string[]).includes(m[1]!) ? path.slice(prefix.length + 1) : path;
}
