// Loads a configuration for `check`/`run` as asked: OM1's file through the compatibility layer, and/or onto simulated bindings.
import { ConfigError } from '../../errors.js';
import { type LoadOptions, MAX_CONFIG_BYTES, displayName, loadConfig, resolveTarget } from '../../config/load.js';
import { readRegularFile, UnreadableFile } from '../../config/read-file.js';
import { parseConfigText } from '../../config/parse-text.js';
import type { LoadedConfig } from '../../config/schema.js';
import { simulateConfig } from '../../config/simulate.js';
import { ADDRESS_ENV, ADDRESS_KEYS } from '../../cloud/addresses.js';
import { convertOm1, type Om1Report } from './convert.js';

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
}

/** A file the compatibility layer cannot run: each missing part and each unsupported plugin is an issue. */
export function om1Problems(file: string, report: Om1Report): ConfigError {
  const issues = [
    ...report.missing.map((m) => ({ file, path: '', kind: 'format' as const, message: `not carried out by cortexd: ${m}` })),
    ...report.unsupported.map((m) => ({ file, path: '', kind: 'format' as const, message: `unsupported (third-party web service): ${m}` })),
  ];
  return new ConfigError(issues);
}

/** Reads and parses a file as the loader does (the same size limit, a parse error as one issue). */
function readParsed(file: string): Record<string, unknown> {
  const shown = displayName(file);
  let text: string;
  try {
    text = readRegularFile(file, MAX_CONFIG_BYTES);
  } catch (err) {
    if (!(err instanceof UnreadableFile)) throw err;
    throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: err.message }]);
  }
  return parseConfigText(text, shown);
}

/**
 * Loads `target` as asked. Without `om1` or `simulate` this is `loadConfig`. With `om1` the file is
 * converted first and any part it cannot carry out is a ConfigError listing them all (with the
 * translations made so far in `report`). The converted or simulated text is checked by the same
 * loader as if it were the file (its directory stays `${CONFIG_DIR}`).
 */
export async function loadAs(target: { name?: string; file?: string }, options: LoadAsOptions = {}): Promise<LoadedAs> {
  const { om1, simulate, ...loadOptions } = options;
  if (!om1 && !simulate) return { loaded: await loadConfig(target, loadOptions) };
  const { file } = resolveTarget(target);
  let raw = readParsed(file);
  const result: Omit<LoadedAs, 'loaded'> = {};
  if (om1) {
    const converted = convertOm1(raw, { simulate: simulate === true });
    result.om1 = { translations: converted.translations, missing: converted.missing, unsupported: converted.unsupported };
    if (converted.missing.length + converted.unsupported.length > 0) throw Object.assign(om1Problems(displayName(file), result.om1), { report: result.om1 });
    raw = converted.config;
  }
  let env = loadOptions.env;
  if (simulate) {
    const sim = simulateConfig(raw);
    raw = sim.config;
    result.simulated = sim.lines;
    // The embedded service for every address: the CORTEX_* address variables are not read.
    const { configEnvironment } = await import('../../config/env.js');
    const base = { ...(env ?? configEnvironment()) };
    for (const k of ADDRESS_KEYS) delete base[ADDRESS_ENV[k]];
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
