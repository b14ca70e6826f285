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
import { type UnknownField, unknownFields, zodIssueMessages } from './issues.js';
import { locator } from './locate.js';
import { convertLegacy, isLegacy, legacyFilePath } from './legacy.js';
import { Concealer } from './conceal.js';
import { checkPlugins } from './plugins-check.js';
import { parseConfigText } from './parse-text.js';
import { allowedVariables, variableProblems } from './variable-policy.js';
import { readRegularFile, UnreadableFile } from './read-file.js';
import { AgentConfig, type LoadedConfig, type LlmConfig, type ModeConfig } from './schema.js';
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

/** The last segment of a formatted path: `hertz` of `modes.a.hertz`, `["a.b"]` of `x["a.b"]`. */
function lastSegment(path: string): string {
  const m = /(\[[^\]]*\]|[A-Za-z_$][A-Za-z0-9_$]*)$/.exec(path);
  return m ? m[1]! : path;
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

async function loadUnconcealed(target: LoadTarget, options: LoadOptions, concealer: Concealer): Promise<LoadedConfig> {
  const { file, configName } = resolveTarget(target);
  const shown = displayName(file);
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  // Paths are reported as the user wrote the file: for a legacy file, `modes.<name>.hertz` is `hertz`.
  let filePath = (p: string) => p;
  // Each problem and warning carries its line and column once the file has parsed.
  let places: ReturnType<typeof locator> | undefined;
  const fail = (path: Array<PropertyKey> | string, message: string, kind: ConfigIssue['kind'] = 'format') => {
    const p = filePath(typeof path === 'string' ? path : formatPath(path));
    issues.push({ file: shown, path: p, message, kind, ...places?.at(p) });
  };
  const warn = (path: Array<PropertyKey> | string, message: string) => {
    const p = filePath(typeof path === 'string' ? path : formatPath(path));
    const place = places?.at(p);
    const where = place ? `${shown}:${place.line}:${place.column}` : shown;
    warnings.push(p ? `${where}: ${p}: ${message}` : `${where}: ${message}`);
  };

  // Read: a regular file only (after symlinks), at most MAX_CONFIG_BYTES actually read, a FIFO refused at once.
  let text: string;
  if (target.text !== undefined) {
    if (Buffer.byteLength(target.text) > MAX_CONFIG_BYTES)
      throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: `larger than ${MAX_CONFIG_BYTES} bytes` }]);
    text = target.text;
  } else {
    try {
      text = readRegularFile(file, MAX_CONFIG_BYTES);
    } catch (err) {
      if (!(err instanceof UnreadableFile)) throw err;
      // A name (not a path given where a name goes) that names no file: the names there are.
      if (err.code === 'ENOENT' && !target.file && file === join(configDir(), `${configName}.json5`))
        throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: unknownNameMessage(configName) }]);
      throw new ConfigError([{ file: shown, path: '', kind: 'parse', message: err.message }]);
    }
  }

  // Parse (syntax with a hint in plain words, an object at the top, no key that reaches a prototype).
  const raw = parseConfigText(text, shown);
  places = locator(text);
  let data = raw as Record<string, unknown>;

  // Version.
  const version = checkVersion(data.version);
  if (!version.ok) {
    fail('version', version.message, 'version');
    if (!version.continue) throw new ConfigError(issues, warnings);
  } else if (version.warning) {
    warn('version', version.warning);
  }

  // Which variables the file may read, and where (before substitution: an unset one counts too).
  for (const p of variableProblems(raw, allowedVariables(raw))) fail(p.path, p.message, 'env');

  // Substitution.
  const env = options.env ?? configEnvironment();
  // Built-in variables, so a configuration can name files beside itself or in the state directory
  // whatever the working directory (systemd starts services in /); the environment may override them.
  const sub = substituteAll(data, { CONFIG_DIR: dirname(file), STATE_DIR: stateDir(), ...env });
  for (const p of sub.problems) fail(p.path, p.message, 'env');
  const variables: { path: string; names: string[] }[] = [];
  for (const s of sub.substituted) {
    const secretive = s.variables.filter((v) => !BUILT_IN_VARIABLES.has(v) || env[v] !== undefined);
    if (secretive.length > 0) concealer.add(s.value, secretive);
    const names = s.variables.filter((v) => !BUILT_IN_VARIABLES.has(v));
    if (names.length > 0) variables.push({ path: formatPath(s.path), names });
  }
  data = (sub.value ?? {}) as Record<string, unknown>;

  // Legacy conversion, decided on the file as written (a `modes` emptied by substitution is still multi-mode).
  const legacy = isLegacy(raw as Record<string, unknown>);
  if (legacy) {
    data = convertLegacy(data, configName);
    const modeName = String(data.default_mode);
    filePath = (p) => legacyFilePath(p, modeName);
  }
  // `name` defaults to the config name in both forms (a legacy mode is already named after it).
  if (data.name === undefined) data.name = configName;

  // The API key may come from OM_API_KEY instead of the file.
  const envKey = env.OM_API_KEY;
  if (envKey) concealer.add(envKey, ['OM_API_KEY']);
  if (typeof env.URID === 'string' && env.URID) concealer.add(env.URID, ['URID']);
  if ((data.api_key === undefined || data.api_key === '') && envKey) {
    data.api_key = envKey;
    // Read from the environment as surely as `${OM_API_KEY}` would be: a pushed file is checked against it.
    variables.push({ path: 'api_key', names: ['OM_API_KEY'] });
  }

  // CORTEX_LLM_BASE_URL: the hosted models go to an OpenAI-compatible server instead (docs/models.md).
  const endpoint = modelEndpoint(env);
  const notes: string[] = [];
  if (isEndpointProblem(endpoint)) fail(endpoint.path, endpoint.message, 'env');
  else if (endpoint) {
    if (endpoint.apiKey) concealer.add(endpoint.apiKey, [endpoint.keyFrom ?? MODEL_ENDPOINT_ENV.key]);
    notes.push(...applyModelEndpoint(data, endpoint).map((line) => `model: ${line}`));
    if (notes.length === 0)
      notes.push(`model: ${MODEL_ENDPOINT_ENV.base} is set, but this configuration has no CloudLLM to send there (a LocalLLM keeps its own base_url)`);
  }

  // Schema. A field left out for an unset variable is an error naming the variable(s) when the
  // schema (or a plugin's schema, below) requires it, else a warning once all checks have run.
  // jitless: a configuration is parsed once, so zod's compiled fast path (a new Function per object
  // schema) costs more than it saves (`run`'s first tick, `check`). Same results.
  const parsed = AgentConfig.safeParse(data, { reportInput: true, jitless: true });
  const unresolvedAt = new Map<string, string[]>();
  for (const u of sub.unresolved) {
    const p = formatPath(u.path);
    unresolvedAt.set(p, [...(unresolvedAt.get(p) ?? []), u.variable]);
  }
  const requiredMissing = new Set<string>();
  const failOrUnset = (path: Array<PropertyKey>, message: string, kind: ConfigIssue['kind']) => {
    const p = filePath(formatPath(path));
    const variables = unresolvedAt.get(p);
    if (variables) {
      if (requiredMissing.has(p)) return;
      requiredMissing.add(p);
      const names = variables.join(', ');
      const example = variables[0]!;
      fail(
        p,
        `environment variable${variables.length > 1 ? 's' : ''} ${names} ${variables.length > 1 ? 'are' : 'is'} not set and ${variables.length > 1 ? 'have' : 'has'} no default: set ${variables.length > 1 ? 'them' : 'it'} in ${displayName(envFilePath())} or the environment, or write \${${example}:-default}`,
        'env',
      );
    } else if (p === 'api_key' && message.startsWith('missing')) {
      fail(p, 'missing: set api_key in the file or the OM_API_KEY environment variable', 'format');
    } else {
      fail(p, message, kind);
    }
  };
  const warnUnset = () => {
    for (const [p, variables] of unresolvedAt) {
      if (!requiredMissing.has(p))
        warn(p, `environment variable${variables.length > 1 ? 's' : ''} ${variables.join(', ')} not set and no default; this optional field is left out`);
    }
    unresolvedAt.clear();
  };
  if (!parsed.success) {
    for (const { path, message } of zodIssueMessages(parsed.error)) failOrUnset(path, message, 'format');
  }
  // Nothing is silently ignored: a field this runtime does not carry out is a problem, not a warning.
  const unknown = (u: UnknownField, message: string) => {
    const at = filePath(u.path);
    // A misspelt field: the likely one named, and its "missing" problem (when required) folded into this one.
    if (u.suggestion) {
      const parent = at.slice(0, at.length - lastSegment(at).length).replace(/\.$/, '');
      const meant = parent ? `${parent}.${u.suggestion}` : u.suggestion;
      const missing = issues.findIndex((i) => i.path === meant && i.message.startsWith('missing'));
      if (missing >= 0) issues.splice(missing, 1);
      message = `unknown field; did you mean ${JSON.stringify(u.suggestion)}? (rename it${missing >= 0 ? `: ${u.suggestion} is required and missing` : ''}; \`cortexd schema\` lists the fields)`;
    }
    (options.unknownFields === 'warn' ? warn : fail)(at, message);
  };
  for (const u of unknownFields(AgentConfig as z.ZodType, data)) unknown(u, UNKNOWN_FIELD);

  // URID from the file or the URID variable.
  // A URID in the file that is not a string is already reported by the schema.
  const uridCheck = data.URID !== undefined && typeof data.URID !== 'string' ? ({ ok: true, urid: undefined } as const) : checkUrid(data.URID ?? env.URID);
  if (!uridCheck.ok) fail(data.URID !== undefined ? 'URID' : 'URID (from the URID variable)', uridCheck.message);
  if (data.URID === undefined && uridCheck.ok && uridCheck.urid) variables.push({ path: 'URID', names: ['URID'] });

  if (!parsed.success) {
    warnUnset();
    throw new ConfigError(issues, warnings);
  }
  // Relative paths of stdio tool servers mean the configuration's directory, whatever the working directory.
  const config = resolveServerDirs(parsed.data, dirname(file));
  for (const p of missingServerFiles(config)) fail(p.path, p.message, 'reference');

  // Modes without a model take the global one; a mode's own model replaces it whole.
  const modes: Record<string, ModeConfig & { cortex_llm: LlmConfig }> = {};
  for (const [name, mode] of Object.entries(config.modes)) {
    const llm = mode.cortex_llm ?? config.cortex_llm;
    if (!llm) {
      fail(['modes', name, 'cortex_llm'], 'missing, and there is no global cortex_llm to use instead');
      continue;
    }
    modes[name] = { ...mode, cortex_llm: llm };
  }

  for (const problem of crossCheck(config)) fail(problem.path, problem.message, 'reference');
  for (const w of hookModuleWarnings(config, hooksDirFor(file))) warn(w.path, w.message);
  for (const w of openCvWarnings(config)) warn(w.path, w.message);
  for (const w of ddsWarnings(config)) warn(w.path, w.message);
  if (options.plugins !== false) {
    const plugins = checkPlugins(config);
    for (const p of plugins.problems) failOrUnset(p.path, p.message, p.unknownType ? 'unknown_type' : 'format');
    for (const p of plugins.unknownFields) unknown(p, UNKNOWN_PLUGIN_FIELD);
  }
  warnUnset();
  // Hosted addresses: the file's `service` block under the CORTEX_* variables; `embedded` is the local service.
  let addresses: AddressSettings | undefined;
  try {
    addresses = readAddresses(config.service, env, shown);
  } catch (err) {
    if (err instanceof ConfigError) for (const i of err.issues) fail(i.path, i.message);
    else throw err;
  }
  if (addresses && options.plugins !== false) {
    for (const p of unreachableAddresses(config, addresses, displayName(envFilePath()))) {
      if (p.placeholder) warn(p.path, `no address configured: the placeholder ${p.message}`);
      else fail(p.path, p.message, 'reference');
    }
  }
  // The fleet channel: the `fleet` block under the CORTEX_MQTT_* variables (off unless a broker is named).
  const fleet = readFleet(config.fleet, env, { urid: uridCheck.ok ? uridCheck.urid : undefined, configFile: file });
  for (const p of fleet.problems) fail(p.path, p.message);
  for (const w of fleet.warnings) warn(w.path, w.message);
  if (issues.length > 0 || !addresses) throw new ConfigError(issues, warnings);

  const apiKey = config.api_key || envKey || '';
  // The key is judged only where it goes to the hosted API: an address a plugin of this configuration
  // calls that is not the embedded service. A key for an OpenAI-compatible server (CORTEX_LLM_BASE_URL,
  // a LocalLLM) may have any shape.
  const hostedUse = options.plugins === false ? ADDRESS_KEYS : (deviceNeeds(config).services ?? []).map((s) => s.address as AddressKey);
  const allEmbedded = hostedUse.every((k) => addresses[k] === EMBEDDED);
  if (!allEmbedded && !/^key_(live|test)_/.test(apiKey)) {
    warn(
      'api_key',
      apiKey === ''
        ? 'no API key: calls to the hosted service will fail with 401'
        : `placeholder API key ${apiKey === 'openmind_free' ? '"openmind_free"' : '(no key_live_/key_test_ prefix)'}: calls to the hosted service will fail; set OM_API_KEY`,
    );
  }

  return {
    file,
    configName,
    legacy,
    config: { ...config, modes },
    apiKey,
    addresses,
    ...(uridCheck.ok && uridCheck.urid ? { urid: uridCheck.urid } : {}),
    ...(fleet.settings ? { fleet: fleet.settings } : {}),
    sha256: createHash('sha256').update(text).digest('hex'),
    variables,
    warnings,
    ...(notes.length ? { notes } : {}),
  };
}
