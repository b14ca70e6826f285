// Loads a configuration for `check`/`run` as asked: OM1's file through the compatibility layer, and/or onto simulated bindings.
import { ConfigError } from '../../errors.js';
import { type LoadOptions, MAX_CONFIG_BYTES, displayName, loadConfig, resolveTarget } from '../../config/load.js';
import { readRegularFile, UnreadableFile } from '../../config/read-file.js';
import { parseConfigText } from '../../config/parse-text.js';
import type { LoadedConfig } from '../../config/schema.js';
import { simulateConfig } from '../../config/simulate.js';
import { ADDRESS_ENV, ADDRESS_KEYS } from '../../cloud/addresses.js';
import { convertOm1, type Om1Report } from './convert.js';
import { readOm1Text } from './read.js';

export interface LoadAsOptions extends LoadOptions {
  /** Read the file as OM1 writes it (`--om1`). */
  om1?: boolean;
  /** Simulated bindings for every device, the embedded service for every address (`--simulate`). */
  simulate?: boolean;
}

export interface LoadedAs {
  loaded: LoadedConfig;
  /** The compatibility layer's report (with `om1`). */
  om1?: Om1Report;
  /** What `--simulate` replaced, one line each. */
  simulated?: string[];
  /** Simulated: asked for, or the OM1 file's `use_sim: true`. */
  simulate?: boolean;
  /** The OM1 file's `use_tracer`: the run is recorded. */
  tracer?: boolean;
}

/** A file the compatibility layer cannot run: each missing part and each unsupported plugin is an issue. */
export function om1Problems(file: string, report: Om1Report): ConfigError {
  const issues = [
    ...report.missing.map((m) => ({ file, path: '', kind: 'format' as const, message: `not carried out by cortexd: ${m}` })),
    ...report.unsupported.map((m) => ({ file, path: '', kind: 'format' as const, message: `unsupported (third-party web service): ${m}` })),
    ...report.refused.map((m) => ({ file, path: '', kind: 'format' as const, message: `refused: ${m}` })),
  ];
  return new ConfigError(issues);
}

/**
 * Reads and parses a file as the loader does (the same size limit, a parse error as one issue); an OM1
 * file as OM1's loader reads it (src/compat/om1/read.ts), with what reading it changed in `notes`.
 */
function readParsed(file: string, om1?: { env: Record<string, string | undefined>; notes: string[] }): Record<string, unknown> {
  const shown = displayName(file);
  let text: string;
  try {
    text = readRegularFile(file, MAX_CONFIG_BYTES);
  } catch (err) {
    if (!(err instanceof UnreadableFile)) throw err;
    throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: err.message }]);
  }
  // A native file: the loader's own parser (syntax, an object at the top, no prototype key).
  if (!om1) return parseConfigText(text, shown);
  let raw: unknown;
  try {
    const read = readOm1Text(text, om1.env);
    raw = read.raw;
    om1.notes.push(...read.notes);
  } catch (err) {
    const e = err as SyntaxError & { lineNumber?: number; columnNumber?: number };
    const where = e.lineNumber !== undefined ? `line ${e.lineNumber}, column ${e.columnNumber}: ` : '';
    throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: `${where}${String(e.message).replace(/^JSON5: /, '')}` }]);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError([{ file: shown, path: '', kind: 'format', message: 'the top level must be an object' }]);
  return raw as Record<string, unknown>;
}

/**
 * Loads `target` as asked. Without `om1` or `simulate` this is `loadConfig`. With `om1` the file is
 * converted first and any part it cannot carry out is a ConfigError listing them all (with the
 * translations made so far in `report`). The converted or simulated text is checked by the same
 * loader as if it were the file (its directory stays `${CONFIG_DIR}`).
 */
export async function loadAs(target: { name?: string; file?: string }, options: LoadAsOptions = {}): Promise<LoadedAs> {
  const { om1, ...loadOptions } = options;
  let simulate = options.simulate === true;
  if (!om1 && !simulate) return { loaded: await loadConfig(target, loadOptions) };
  const { file, configName } = resolveTarget(target);
  const notes: string[] = [];
  let env = loadOptions.env;
  let raw = readParsed(file, om1 ? { env: env ?? (await import('../../config/env.js')).configEnvironment(), notes } : undefined);
  const result: Omit<LoadedAs, 'loaded'> = {};
  if (om1) {
    const converted = convertOm1(raw, { simulate, fileName: configName, file });
    result.om1 = {
      translations: [...notes, ...converted.translations],
      missing: converted.missing,
      unsupported: converted.unsupported,
      refused: converted.refused,
      warnings: converted.warnings,
    };
    if (converted.missing.length + converted.unsupported.length + converted.refused.length > 0)
      throw Object.assign(om1Problems(displayName(file), result.om1), { report: result.om1 });
    raw = converted.config;
    simulate = converted.simulate;
    if (converted.tracer) result.tracer = true;
  }
  result.simulate = simulate;
  if (simulate) {
    const sim = simulateConfig(raw);
    raw = sim.config;
    result.simulated = sim.lines;
    // The embedded service for every address: the CORTEX_* address variables are not read.
    const { configEnvironment } = await import('../../config/env.js');
    const base = { ...(env ?? configEnvironment()) };
    for (const k of ADDRESS_KEYS) delete base[ADDRESS_ENV[k]];
    // And the embedded model: an OpenAI-compatible endpoint (CORTEX_LLM_BASE_URL) is not called either.
    delete base.CORTEX_LLM_BASE_URL;
    env = base;
  }
  try {
    const loaded = await loadConfig({ file, text: JSON.stringify(raw) }, { ...loadOptions, ...(env ? { env } : {}) });
    return { ...result, loaded };
  } catch (err) {
    // The translations made are part of the answer even when the translated file has problems.
    if (err instanceof ConfigError && result.om1) Object.assign(err, { report: result.om1 });
    throw err;
  }
}
