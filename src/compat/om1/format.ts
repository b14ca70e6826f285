// OM1's file-level rules (its Go loader, v1.1): version, single-mode wrapping, use_sim, use_tracer, MCP servers, defaults.
import { LATEST_VERSION } from '../../config/version.js';

/** The version of OM1's Go runtime whose format this layer reads (internal/config/version.go). */
export const OM1_RUNTIME_VERSION = 'v1.1.0';

/** What the file-level rules found: lines for the report, and whether the file asks to be simulated or traced. */
export interface FormatResult {
  translations: string[];
  missing: string[];
  /** Refused as OM1 refuses it (another major version, a malformed version). */
  refused: string[];
  /** Said as OM1 warns (another minor version). */
  warnings: string[];
  /** `use_sim: true`: run as `--simulate`. */
  simulate: boolean;
  /** `use_tracer`: record the run (model calls included) as OM1's tracer writes its traces. */
  tracer: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** OM1's version parse: an optional `v`, one to three numeric segments (`v1`, `v1.1`, `v1.1.0`). */
function parseVersion(raw: string): [number, number, number] | undefined {
  const segments = raw.trim().replace(/^v/, '').split('.');
  if (segments.length === 0 || segments.length > 3 || segments[0] === '') return undefined;
  const parts: [number, number, number] = [0, 0, 0];
  for (const [i, s] of segments.entries()) {
    if (!/^\d+$/.test(s)) return undefined;
    parts[i] = Number(s);
  }
  return parts;
}

/**
 * Applies OM1's version rules to `out.version`: none is OM1's oldest (Python) single-mode format, read
 * as v1.0.0; another major version is refused; v1.0.x is the format this runtime reads natively; v1.1.x
 * (the Go runtime's) and later minors are read with their keys translated, a later minor with OM1's warning.
 */
function version(raw: unknown, out: Record<string, unknown>, r: FormatResult): void {
  if (raw === undefined) {
    out.version = 'v1.0.0';
    r.translations.push("version: none (OM1's oldest single-mode format) -> v1.0.0");
    return;
  }
  const parts = typeof raw === 'string' ? parseVersion(raw) : undefined;
  if (!parts) {
    r.refused.push(`version: ${JSON.stringify(raw)} is not a version (OM1 reads vMAJOR.MINOR.PATCH, for example "${OM1_RUNTIME_VERSION}")`);
    return;
  }
  const [major, minor, patch] = parts;
  const shown = `v${major}.${minor}.${patch}`;
  if (major !== 1) {
    r.refused.push(`version: ${JSON.stringify(raw)} is incompatible with OM1's runtime ${OM1_RUNTIME_VERSION}: major version mismatch (OM1 refuses it too)`);
    return;
  }
  if (minor === 0) {
    if (shown !== raw) {
      out.version = shown;
      r.translations.push(`version: ${JSON.stringify(raw)} -> ${shown}`);
    }
    return;
  }
  out.version = LATEST_VERSION;
  r.translations.push(`version: ${raw} -> ${LATEST_VERSION} (OM1's Go-era format; its keys are translated below)`);
  if (minor !== 1)
    r.warnings.push(`version ${raw}: OM1's runtime is ${OM1_RUNTIME_VERSION}; another minor version may cause compatibility issues (OM1 warns the same)`);
}

/** `mcp_servers` entries as OM1 writes them ({name, command, args, env}, later transport/url/headers): the transport made explicit. */
export function mcpServers(list: unknown, path: string, lines: string[]): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((s, i) => {
    if (!isObject(s) || typeof s.transport === 'string') {
      if (isObject(s) && (s.transport === 'streamable-http' || s.transport === 'streamable_http')) {
        lines.push(`${path}[${i}].transport: ${s.transport} -> http`);
        return { ...s, transport: 'http' };
      }
      return s;
    }
    const transport = typeof s.command === 'string' && s.command ? 'stdio' : 'http';
    lines.push(
      `${path}[${i}]: ${String(s.name)} -> an MCP tool server over ${transport} (${transport === 'stdio' ? `it starts ${String(s.command)}, as a native file's server does: a configuration pushed to the robot starts it only if the robot's allowlist names it` : String(s.url)})`,
    );
    return { ...s, transport };
  });
}

/**
 * The file-level keys of OM1's format. Mutates `out` (a copy of the file): removes what it carries
 * elsewhere and fills what this runtime's format requires where OM1 has a default.
 */
export function applyFormat(raw: Record<string, unknown>, out: Record<string, unknown>, fileName: string): FormatResult {
  const r: FormatResult = { translations: [], missing: [], refused: [], warnings: [], simulate: false, tracer: false };
  const say = (line: string) => r.translations.push(line);
  version(raw.version, out, r);

  if ('use_sim' in raw) {
    delete out.use_sim;
    r.simulate = raw.use_sim === true;
    say(
      `use_sim: ${JSON.stringify(raw.use_sim)} -> ${r.simulate ? 'run as --simulate (every device simulated, the embedded service for every address)' : 'real devices (as without --simulate)'}`,
    );
  }
  if ('use_tracer' in raw) {
    delete out.use_tracer;
    const t = raw.use_tracer;
    r.tracer = t === true || (isObject(t) && t.enabled === true);
    say(
      `use_tracer: ${JSON.stringify(t)} -> ${r.tracer ? "the run is recorded (run --record: every model call, event and input, in an MCAP file under the state directory's traces/)" : 'no recording'}`,
    );
    if (isObject(t) && isObject(t.quality_scorer) && t.quality_scorer.enabled === true)
      say("use_tracer.quality_scorer: OM1's live conversation-quality scorer is not run; the recording keeps every model call to review");
  }
  // knowledge_base and memory are carried out by the runtime's memory (convert.ts says how).

  if (isObject(raw.modes)) {
    // Multi-mode: OM1's defaults for what this runtime's format requires.
    const defaults: Array<[string, unknown, string]> = [
      ['name', fileName, "the file's name"],
      ['allow_manual_switching', false, "OM1's default"],
      ['mode_memory_enabled', false, "OM1's default"],
      ['system_governance', '', "OM1's default"],
      ['api_key', '', 'OM_API_KEY is read, as OM1 reads it'],
    ];
    for (const [key, value, why] of defaults) {
      if (out[key] !== undefined) continue;
      out[key] = value;
      say(`${key}: none -> ${JSON.stringify(value)} (${why})`);
    }
    if (out.default_mode === undefined) {
      const first = Object.keys(raw.modes)[0];
      out.default_mode = first;
      say(`default_mode: none -> ${JSON.stringify(first)} (the first mode)`);
    }
    if ('mcp_servers' in raw) {
      delete out.mcp_servers;
      say('mcp_servers: at the top of a file with modes OM1 ignores them (each mode names its own); ignored the same');
    }
  } else {
    // Single mode: OM1 names the one mode after default_mode, then name, then "default".
    const modeName = [raw.default_mode, raw.name].find((v): v is string => typeof v === 'string' && v.length > 0) ?? 'default';
    if (modeName !== raw.name) {
      out.name = modeName;
      delete out.default_mode;
      say(`default_mode/name: the one mode is named ${JSON.stringify(modeName)} (OM1 names it after default_mode, then name, then "default")`);
    }
    if (out.hertz === undefined || out.hertz === 0) {
      out.hertz = 1;
      say("hertz: none -> 1 (OM1's default)");
    }
    if (out.api_key === undefined) out.api_key = '';
    if (out.system_governance === undefined) out.system_governance = '';
    if (out.system_prompt_base === undefined) out.system_prompt_base = '';
    if ('mcp_servers' in raw) out.mcp_servers = mcpServers(raw.mcp_servers, 'mcp_servers', r.translations);
  }
  return r;
}

/** A mode's OM1 fields made this runtime's: required texts filled, `name` dropped, timeout 0 (none) dropped, MCP transports explicit. */
export function applyModeFormat(m: Record<string, unknown>, name: string, prefix: string, lines: string[]): void {
  if (m.display_name === undefined) m.display_name = typeof m.name === 'string' && m.name ? m.name : name;
  if (m.description === undefined) m.description = '';
  if (m.system_prompt_base === undefined) m.system_prompt_base = '';
  if (m.hertz === undefined || m.hertz === 0) {
    m.hertz = 1;
    lines.push(`${prefix}hertz: none -> 1 (OM1's default)`);
  }
  if ('name' in m) delete m.name;
  if (m.timeout_seconds === 0) {
    delete m.timeout_seconds;
    lines.push(`${prefix}timeout_seconds: 0 -> none (OM1 reads 0 as no timeout)`);
  }
  if ('mcp_servers' in m) m.mcp_servers = mcpServers(m.mcp_servers, `${prefix}mcp_servers`, lines);
}
