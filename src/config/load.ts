// Loads a configuration: read, JSON5 parse, version check, substitution, legacy conversion, validation.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import type { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { configDir, configSearchPath, findConfigFile, hooksDirFor, stateDir } from '../paths.js';
import { configEnvironment, envFilePath, formatPath, substituteAll } from './env.js';
import { unreachableAddresses } from './address-check.js';
import { missingServerFiles, resolveServerDirs } from './paths-check.js';
import { didYouMean } from '../plugins/suggest.js';
import { unknownFields, zodIssueMessages } from './issues.js';
import { LoadReport, type UnsetFields, unknownFieldReporter, unsetFields } from './load-report.js';
import { locator } from './locate.js';
import { convertLegacy, isLegacy, legacyFilePath } from './legacy.js';
import { Concealer } from './conceal.js';
import { checkPlugins } from './plugins-check.js';
import { parseConfigText } from './parse-text.js';
import { allowedVariables, variableProblems } from './variable-policy.js';
import { readRegularFile, UnreadableFile } from './read-file.js';
import { AgentConfig, type LoadedConfig, type LlmConfig, type ModeConfig } from './schema.js';

type UnknownReporter = ReturnType<typeof unknownFieldReporter>;
import { checkUrid } from './urid.js';
import { checkVersion } from './version.js';
import { crossCheck, hookModuleWarnings } from './cross-check.js';
import { openCvWarnings } from './opencv-users.js';
import { ddsWarnings } from './dds-users.js';
import { ADDRESS_KEYS, type AddressKey, EMBEDDED, readAddresses, type AddressSettings } from '../cloud/addresses.js';
import { deviceNeeds } from './device-needs.js';
import { applyModelEndpoint, isEndpointProblem, MODEL_ENDPOINT_ENV, modelEndpoint } from './model-endpoint.js';
import { readFleet } from './fleet.js';

export interface LoadTarget {
  /** A configuration name: `config/<name>.json5`. */
  name?: string;
  /** A path to a file, as given to `--config`. */
  file?: string;
  /**
   * The file's text, checked as if it were the file at `file` (its directory is `${CONFIG_DIR}`):
   * a configuration pushed by the fleet's `reload`, checked before it replaces the running one.
   */
  text?: string;
}

export interface LoadOptions {
  /** The variables the file sees; default: `.env` overlaid by the process environment. */
  env?: Record<string, string | undefined>;
  /** Resolve plugin types through the registry and validate their config blocks (default true). */
  plugins?: boolean;
  /**
   * A field nothing carries out: `error` (default: check and run, nothing silently ignored) or `warn`
   * (graph and modes, which only draw or list what the file describes, e.g. an OM1 file as it is).
   */
  unknownFields?: 'error' | 'warn';
}

/** The problem of a field nothing carries out (`cortexd schema` lists every field that is). */
export const UNKNOWN_FIELD =
  'unknown field: this runtime does not carry it out (remove it; `cortexd schema` lists the fields it reads; an OM1 file runs with --om1)';
export const UNKNOWN_PLUGIN_FIELD = "unknown field: this plugin does not carry it out (remove it; `cortexd schema` lists each plugin's options)";

/** Largest configuration file read; anything bigger is refused before parsing. */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Resolves a target to an absolute file path and the name used in messages and mode memory. */
export function resolveTarget(target: LoadTarget): { file: string; configName: string } {
  if (target.file) {
    const file = resolve(target.file);
    return { file, configName: basename(file, extname(file)) };
  }
  const name = target.name ?? process.env.CONFIG;
  if (!name) throw new ConfigError([{ file: 'config', path: '', kind: 'format', message: 'no configuration named: pass NAME, --config PATH, or set CONFIG' }]);
  // A path goes anywhere a name goes, as OM1's loader reads it: absolute, or with a directory in it, is a
  // path; a bare `NAME.json5` is the file of that name here if there is one, else config/NAME.json5.
  if (isAbsolute(name) || /[\\/]/.test(name) || (/\.json5?$/.test(name) && existsSync(name))) {
    const file = resolve(name);
    return { file, configName: basename(file, extname(file)) };
  }
  if (!NAME_RE.test(name) || name.includes('..')) {
    throw new ConfigError([
      {
        file: name,
        path: '',
        kind: 'format',
        message: `not a configuration name: ${JSON.stringify(name)} (letters, digits, _ . - only; use --config for a path)`,
      },
    ]);
  }
  const stem = name.endsWith('.json5') ? name.slice(0, -'.json5'.length) : name;
  return { file: findConfigFile(stem) ?? join(configDir(), `${stem}.json5`), configName: stem };
}

/** The names of the configurations in `dir`, sorted ([] when it cannot be read). */
function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json5'))
      .map((f) => f.slice(0, -'.json5'.length))
      .sort();
  } catch {
    return [];
  }
}

/** For a name with no file: where it was looked for, the names there are, and the likely one. */
function unknownNameMessage(name: string): string {
  const names = [...new Set(configSearchPath().flatMap(namesIn))].sort();
  const known = names.length ? `known: ${names.join(', ')}${didYouMean(name, names)}` : 'none found there';
  const own =
    process.env.CORTEX_CONFIG_DIR && !existsSync(configDir())
      ? `; CORTEX_CONFIG_DIR names ${configDir()}, which does not exist (cortexd init NAME creates it)`
      : '';
  const dir = (d: string) => (isAbsolute(displayName(d)) ? displayName(d) : `./${displayName(d)}`);
  return `no configuration named ${JSON.stringify(name)}; looked in ${configSearchPath().map(dir).join(', ')}${own}; ${known} (or pass --config PATH; cortexd init ${name} makes one in ${dir(configDir())})`;
}

/** The file name as printed in problems: relative to the working directory when inside it. */
export function displayName(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/**
 * Loads and validates a configuration. Collects every problem it can find and throws one
 * ConfigError carrying all of them; returns warnings (unknown fields, newer version, placeholder
 * key, optional fields left out for lack of a variable) with the loaded config.
 *
 * No problem or warning echoes a value that came from a variable (`${VAR}` substitution, OM_API_KEY,
 * URID): it reads "the value of ${VAR} (not shown)"; strings shaped like keys are never quoted either.
 */
export async function loadConfig(target: LoadTarget, options: LoadOptions = {}): Promise<LoadedConfig> {
  const concealer = new Concealer();
  const hide = (issues: ConfigIssue[]): ConfigIssue[] => issues.map((i) => ({ ...i, message: concealer.apply(i.message) }));
  try {
    const loaded = await loadUnconcealed(target, options, concealer);
    return { ...loaded, warnings: loaded.warnings.map((w) => concealer.apply(w)) };
  } catch (err) {
    if (err instanceof ConfigError)
      throw new ConfigError(
        hide(err.issues),
        err.warnings.map((w) => concealer.apply(w)),
      );
    throw err;
  }
}

/** Names of the built-in variables: paths of this machine, not secrets, so messages may show them. */
const BUILT_IN_VARIABLES = new Set(['CONFIG_DIR', 'STATE_DIR']);

/** The file's text: a regular file only (after symlinks), at most MAX_CONFIG_BYTES actually read, a FIFO refused at once; or the pushed text. */
function readConfigText(target: LoadTarget, file: string, configName: string, shown: string): string {
  if (target.text !== undefined) {
    if (Buffer.byteLength(target.text) > MAX_CONFIG_BYTES)
      throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: `larger than ${MAX_CONFIG_BYTES} bytes` }]);
    return target.text;
  }
  try {
    return readRegularFile(file, MAX_CONFIG_BYTES);
  } catch (err) {
    if (!(err instanceof UnreadableFile)) throw err;
    // A name (not a path given where a name goes) that names no file: the names there are.
    if (err.code === 'ENOENT' && !target.file && file === join(configDir(), `${configName}.json5`))
      throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: unknownNameMessage(configName) }]);
    throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: err.message }]);
  }
}

/** The version: a problem (which ends the load at once when nothing after it could be trusted) or a warning. */
function checkVersionOf(data: Record<string, unknown>, report: LoadReport): void {
  const version = checkVersion(data.version);
  if (!version.ok) {
    report.fail('version', version.message, 'version');
    if (!version.continue) throw report.error();
  } else if (version.warning) {
    report.warn('version', version.warning);
  }
}

/** Where the configuration reads variables: each field's path and the names it read (a pushed file is checked against them). */
type VariableUses = NonNullable<LoadedConfig['variables']>;

/**
 * Substitutes the variables. Built-in variables let a configuration name files beside itself or in the
 * state directory whatever the working directory (systemd starts services in /); the environment may
 * override them. Values that came from variables (not built-in paths) are concealed in every message.
 */
function substitute(raw: unknown, file: string, env: Record<string, string | undefined>, report: LoadReport, concealer: Concealer) {
  const sub = substituteAll(raw, { CONFIG_DIR: dirname(file), STATE_DIR: stateDir(), ...env });
  for (const p of sub.problems) report.fail(p.path, p.message, 'env');
  const variables: VariableUses = [];
  for (const s of sub.substituted) {
    const secretive = s.variables.filter((v) => !BUILT_IN_VARIABLES.has(v) || env[v] !== undefined);
    if (secretive.length > 0) concealer.add(s.value, secretive);
    const names = s.variables.filter((v) => !BUILT_IN_VARIABLES.has(v));
    if (names.length > 0) variables.push({ path: formatPath(s.path), names });
  }
  return { data: (sub.value ?? {}) as Record<string, unknown>, variables, unresolved: sub.unresolved };
}

/**
 * The API key and URID of the environment: concealed in messages; the key goes into a file that has
 * none. Returns the environment's key.
 */
function applyEnvironmentKeys(data: Record<string, unknown>, env: Record<string, string | undefined>, concealer: Concealer, variables: VariableUses) {
  const envKey = env.OM_API_KEY;
  if (envKey) concealer.add(envKey, ['OM_API_KEY']);
  if (typeof env.URID === 'string' && env.URID) concealer.add(env.URID, ['URID']);
  if ((data.api_key === undefined || data.api_key === '') && envKey) {
    data.api_key = envKey;
    // Read from the environment as surely as `${OM_API_KEY}` would be: a pushed file is checked against it.
    variables.push({ path: 'api_key', names: ['OM_API_KEY'] });
  }
  return envKey;
}

/** CORTEX_LLM_BASE_URL: the hosted models go to an OpenAI-compatible server instead (docs/models.md); returns the notes that say so. */
function applyEndpoint(data: Record<string, unknown>, env: Record<string, string | undefined>, concealer: Concealer, report: LoadReport): string[] {
  const endpoint = modelEndpoint(env);
  const notes: string[] = [];
  if (isEndpointProblem(endpoint)) report.fail(endpoint.path, endpoint.message, 'env');
  else if (endpoint) {
    if (endpoint.apiKey) concealer.add(endpoint.apiKey, [endpoint.keyFrom ?? MODEL_ENDPOINT_ENV.key]);
    notes.push(...applyModelEndpoint(data, endpoint).map((line) => `model: ${line}`));
    if (notes.length === 0)
      notes.push(`model: ${MODEL_ENDPOINT_ENV.base} is set, but this configuration has no CloudLLM to send there (a LocalLLM keeps its own base_url)`);
  }
  return notes;
}

/** The URID from the file or the URID variable (one in the file that is not a string is already reported by the schema). */
function checkUridOf(data: Record<string, unknown>, env: Record<string, string | undefined>, report: LoadReport, variables: VariableUses) {
  const uridCheck = data.URID !== undefined && typeof data.URID !== 'string' ? ({ ok: true, urid: undefined } as const) : checkUrid(data.URID ?? env.URID);
  if (!uridCheck.ok) report.fail(data.URID !== undefined ? 'URID' : 'URID (from the URID variable)', uridCheck.message);
  if (data.URID === undefined && uridCheck.ok && uridCheck.urid) variables.push({ path: 'URID', names: ['URID'] });
  return uridCheck.ok ? uridCheck.urid : undefined;
}

/** Modes without a model take the global one; a mode's own model replaces it whole. */
function modesWithModels(config: AgentConfig, report: LoadReport) {
  const modes: Record<string, ModeConfig & { cortex_llm: LlmConfig }> = {};
  for (const [name, mode] of Object.entries(config.modes)) {
    const llm = mode.cortex_llm ?? config.cortex_llm;
    if (!llm) {
      report.fail(['modes', name, 'cortex_llm'], 'missing, and there is no global cortex_llm to use instead');
      continue;
    }
    modes[name] = { ...mode, cortex_llm: llm };
  }
  return modes;
}

/** What the schema cannot see: references between parts, hook modules, optional native parts, and each plugin's own schema. */
function crossChecks(config: AgentConfig, file: string, options: LoadOptions, report: LoadReport, unset: UnsetFields, unknown: UnknownReporter): void {
  for (const problem of crossCheck(config)) report.fail(problem.path, problem.message, 'reference');
  for (const w of hookModuleWarnings(config, hooksDirFor(file))) report.warn(w.path, w.message);
  for (const w of openCvWarnings(config)) report.warn(w.path, w.message);
  for (const w of ddsWarnings(config)) report.warn(w.path, w.message);
  if (options.plugins !== false) {
    const plugins = checkPlugins(config);
    for (const p of plugins.problems) unset.failOrUnset(p.path, p.message, p.unknownType ? 'unknown_type' : 'format');
    for (const p of plugins.unknownFields) unknown(p, UNKNOWN_PLUGIN_FIELD);
  }
}

/** Hosted addresses: the file's `service` block under the CORTEX_* variables (`embedded` is the local service), each one a plugin calls checked. */
function addressesOf(config: AgentConfig, env: Record<string, string | undefined>, options: LoadOptions, report: LoadReport): AddressSettings | undefined {
  let addresses: AddressSettings | undefined;
  try {
    addresses = readAddresses(config.service, env, report.shown);
  } catch (err) {
    if (err instanceof ConfigError) for (const i of err.issues) report.fail(i.path, i.message);
    else throw err;
  }
  if (addresses && options.plugins !== false) {
    for (const p of unreachableAddresses(config, addresses, displayName(envFilePath()))) {
      if (p.placeholder) report.warn(p.path, `no address configured: the placeholder ${p.message}`);
      else report.fail(p.path, p.message, 'reference');
    }
  }
  return addresses;
}

/**
 * The key is judged only where it goes to the hosted API: an address a plugin of this configuration
 * calls that is not the embedded service. A key for an OpenAI-compatible server (CORTEX_LLM_BASE_URL,
 * a LocalLLM) may have any shape.
 */
function warnApiKey(config: AgentConfig, addresses: AddressSettings, apiKey: string, options: LoadOptions, report: LoadReport): void {
  const hostedUse = options.plugins === false ? ADDRESS_KEYS : (deviceNeeds(config).services ?? []).map((s) => s.address as AddressKey);
  const allEmbedded = hostedUse.every((k) => addresses[k] === EMBEDDED);
  if (!allEmbedded && !/^key_(live|test)_/.test(apiKey)) {
    report.warn(
      'api_key',
      apiKey === ''
        ? 'no API key: calls to the hosted service will fail with 401'
        : `placeholder API key ${apiKey === 'openmind_free' ? '"openmind_free"' : '(no key_live_/key_test_ prefix)'}: calls to the hosted service will fail; set OM_API_KEY`,
    );
  }
}

async function loadUnconcealed(target: LoadTarget, options: LoadOptions, concealer: Concealer): Promise<LoadedConfig> {
  const { file, configName } = resolveTarget(target);
  const report = new LoadReport(displayName(file));
  const text = readConfigText(target, file, configName, report.shown);
  // Parse (syntax with a hint in plain words, an object at the top, no key that reaches a prototype).
  const raw = parseConfigText(text, report.shown) as Record<string, unknown>;
  report.places = locator(text);
  checkVersionOf(raw, report);
  // Which variables the file may read, and where (before substitution: an unset one counts too).
  for (const p of variableProblems(raw, allowedVariables(raw))) report.fail(p.path, p.message, 'env');
  const env = options.env ?? configEnvironment();
  const sub = substitute(raw, file, env, report, concealer);
  let data = sub.data;
  const { variables } = sub;
  // Legacy conversion, decided on the file as written (a `modes` emptied by substitution is still multi-mode).
  const legacy = isLegacy(raw);
  if (legacy) {
    data = convertLegacy(data, configName);
    const modeName = String(data.default_mode);
    report.filePath = (p) => legacyFilePath(p, modeName);
  }
  // `name` defaults to the config name in both forms (a legacy mode is already named after it).
  if (data.name === undefined) data.name = configName;
  const envKey = applyEnvironmentKeys(data, env, concealer, variables);
  const notes = applyEndpoint(data, env, concealer, report);

  // Schema. jitless: a configuration is parsed once, so zod's compiled fast path (a new Function per object
  // schema) costs more than it saves (`run`'s first tick, `check`). Same results.
  const parsed = AgentConfig.safeParse(data, { reportInput: true, jitless: true });
  const unset = unsetFields(report, sub.unresolved, displayName(envFilePath()));
  if (!parsed.success) for (const { path, message } of zodIssueMessages(parsed.error)) unset.failOrUnset(path, message, 'format');
  const unknown = unknownFieldReporter(report, options.unknownFields);
  for (const u of unknownFields(AgentConfig as z.ZodType, data)) unknown(u, UNKNOWN_FIELD);
  const urid = checkUridOf(data, env, report, variables);
  if (!parsed.success) {
    unset.warnUnset();
    throw report.error();
  }
  // Relative paths of stdio tool servers mean the configuration's directory, whatever the working directory.
  const config = resolveServerDirs(parsed.data, dirname(file));
  for (const p of missingServerFiles(config)) report.fail(p.path, p.message, 'reference');
  const modes = modesWithModels(config, report);
  crossChecks(config, file, options, report, unset, unknown);
  unset.warnUnset();
  const addresses = addressesOf(config, env, options, report);
  // The fleet channel: the `fleet` block under the CORTEX_MQTT_* variables (off unless a broker is named).
  const fleet = readFleet(config.fleet, env, { urid, configFile: file });
  for (const p of fleet.problems) report.fail(p.path, p.message);
  for (const w of fleet.warnings) report.warn(w.path, w.message);
  if (report.issues.length > 0 || !addresses) throw report.error();

  const apiKey = config.api_key || envKey || '';
  warnApiKey(config, addresses, apiKey, options, report);
  return {
    file,
    configName,
    legacy,
    config: { ...config, modes },
    apiKey,
    addresses,
    ...(urid ? { urid } : {}),
    ...(fleet.settings ? { fleet: fleet.settings } : {}),
    sha256: createHash('sha256').update(text).digest('hex'),
    variables,
    warnings: report.warnings,
    ...(notes.length ? { notes } : {}),
  };
}
