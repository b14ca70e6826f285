// Shared by the configuration tests: temp config dirs, a valid multi-mode configuration, and load-or-issues.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSON5 from 'json5';
import { loadConfig, type LoadOptions } from '../../src/config/load.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { ConfigError, type ConfigIssue } from '../../src/errors.js';

/** A temp directory removed at the end of the test `t`. */
export function tempDir(t: { teardown: (fn: () => void) => void }, prefix = 'cortexd-config-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A mode with every required field. */
export function mode(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { display_name: 'Guard', description: 'watches', system_prompt_base: 'You guard.', hertz: 1, ...extra };
}

/** A valid multi-mode configuration (plugin types aside): two modes, one rule, a global model. */
export function validConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 'v1.0.5',
    name: 'spot',
    default_mode: 'guard',
    allow_manual_switching: true,
    mode_memory_enabled: true,
    api_key: 'key_test_abcdef123456',
    system_governance: 'Obey the laws.',
    cortex_llm: { type: 'SomeLLM', config: { history_length: 5 } },
    modes: { guard: mode(), rest: mode({ display_name: 'Rest', hertz: 0.5 }) },
    transition_rules: [{ from_mode: 'guard', to_mode: 'rest', transition_type: 'input_triggered', trigger_keywords: ['rest'], priority: 1 }],
    ...extra,
  };
}

/** A valid legacy (single-mode) configuration. */
export function legacyConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 'v1.0.2',
    hertz: 2,
    name: 'greeter',
    api_key: 'key_live_abcdef123456',
    system_prompt_base: 'You greet.',
    system_governance: 'Be nice.',
    cortex_llm: { type: 'SomeLLM' },
    agent_inputs: [{ type: 'SomeInput' }],
    agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'some_tts' }],
    ...extra,
  };
}

/**
 * The same object listing, in `allowed_variables`, every variable it reads: the fixtures test how
 * variables are substituted, so they declare their names as an author does (the policy itself is
 * config-variable-policy.test.ts's). A secret-named variable still goes only into credential fields.
 */
export function declaringVariables(config: Record<string, unknown>): Record<string, unknown> {
  if ('allowed_variables' in config) return config;
  const names = new Set([...JSON.stringify(config).matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!));
  return names.size > 0 ? { ...config, allowed_variables: [...names] } : config;
}

/** Writes `config` (an object as JSON5, or raw text) to `<dir>/<name>.json5` and returns the path. */
export function writeConfig(dir: string, name: string, config: Record<string, unknown> | string): string {
  const file = join(dir, `${name}.json5`);
  writeFileSync(file, typeof config === 'string' ? config : JSON5.stringify(declaringVariables(config), null, 2));
  return file;
}

export type LoadResult = { ok: true; loaded: LoadedConfig; warnings: string[] } | { ok: false; issues: ConfigIssue[]; warnings: string[]; lines: string[] };

/**
 * Loads a file and returns either the loaded config or the ConfigError's issues. Anything else
 * thrown (a crash) is rethrown, so a test fails loudly. Defaults: no plugin check, an empty env.
 */
export async function tryLoad(file: string, options: LoadOptions = {}): Promise<LoadResult> {
  try {
    const loaded = await loadConfig({ file }, { plugins: false, env: {}, ...options });
    return { ok: true, loaded, warnings: loaded.warnings };
  } catch (err) {
    if (err instanceof ConfigError) {
      return { ok: false, issues: err.issues, warnings: err.warnings, lines: err.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)) };
    }
    throw err;
  }
}

/** Writes and loads in one go. */
export async function loadObject(
  t: { teardown: (fn: () => void) => void },
  config: Record<string, unknown> | string,
  options: LoadOptions = {},
  name = 'subject',
): Promise<LoadResult> {
  return tryLoad(writeConfig(tempDir(t), name, config), options);
}
