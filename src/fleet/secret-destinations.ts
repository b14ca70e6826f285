// Secrets bound to destinations: a pushed configuration that reads the robot's environment may send only to addresses the robot's own configuration names
import { formatPath } from '../config/env.js';
import type { LoadedConfig } from '../config/schema.js';
import { ADDRESS_KEYS } from '../cloud/addresses.js';
import type { CommandResult } from './execute.js';

/** A string that names a place the robot connects to: a URL with a scheme, or a field named like an address. */
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const ADDRESS_FIELD = /^(url|uri|base_url|ws_url|.*_url|host|hostname|endpoint|broker|server)$/i;

/**
 * Every destination of `loaded` as `path -> address`: the hosted service's resolved addresses
 * (`service.base_url` etc., after the CORTEX_* variables) and every string of the configuration that
 * is a URL or sits in an address field (a model's `base_url`, an MCP server's `url`, a broker).
 */
export function destinations(loaded: Pick<LoadedConfig, 'config' | 'addresses'>): Map<string, string> {
  const out = new Map<string, string>();
  for (const key of ADDRESS_KEYS) out.set(`service.${key}`, String(loaded.addresses[key]));
  const walk = (v: unknown, path: Array<string | number>, depth: number) => {
    if (depth > 64) return;
    if (typeof v === 'string') {
      const last = path[path.length - 1];
      if (URL_LIKE.test(v) || (typeof last === 'string' && ADDRESS_FIELD.test(last))) {
        const p = formatPath(path);
        if (!out.has(p)) out.set(p, v);
      }
    } else if (Array.isArray(v)) v.forEach((item, i) => walk(item, [...path, i], depth + 1));
    else if (v && typeof v === 'object') for (const [k, item] of Object.entries(v)) walk(item, [...path, k], depth + 1);
  };
  walk(loaded.config, [], 0);
  return out;
}

/**
 * The robot's values a configuration carries: each `${VAR}` it reads (built-ins such as CONFIG_DIR
 * are paths, not secrets), the API key and URID it takes from the environment included (the loader
 * lists those as read at `api_key` and `URID`).
 */
export function secretsRead(loaded: Pick<LoadedConfig, 'variables'>): string[] {
  return [...new Set((loaded.variables ?? []).flatMap((v) => v.names))];
}

/**
 * Refuses a pushed configuration that reads any of the robot's environment (its key above all) and
 * sends anywhere the robot's own configuration does not: a file that keeps `api_key: "${OM_API_KEY}"`
 * and moves `service.base_url` would carry the key to the new address. A pushed file with no secret
 * of the robot may point where it likes: it sends only what it holds itself. `own` is the
 * configuration from the robot's own files (at start, or a trusted --watch reload), never a pushed one,
 * so a chain of pushes cannot move a destination one step at a time.
 */
export function destinationRefusal(
  next: Pick<LoadedConfig, 'config' | 'addresses' | 'variables'>,
  own: Pick<LoadedConfig, 'config' | 'addresses' | 'configName'>,
  running: string,
): CommandResult | undefined {
  const secrets = secretsRead(next);
  if (secrets.length === 0) return undefined;
  const known = destinations(own);
  const moved = [...destinations(next)].filter(([path, address]) => known.get(path) !== address);
  if (moved.length === 0) return undefined;
  const names = secrets.map((n) => `\${${n}}`).join(', ');
  return {
    ok: false,
    reason: `the new configuration reads this robot's ${names} and sends to ${moved.length} address${moved.length === 1 ? '' : 'es'} that ${own.configName}, the robot's own configuration, does not name (a pushed file that changes a destination cannot carry the robot's secrets there); ${running} keeps running`,
    lines: moved.map(([path]) => `${path}: not this robot's own address for it`),
  };
}
