// Doctor's configuration checks: the file loads, the API key is real, and every hosted or model address answers on TCP.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { parse as parseDotenv } from 'dotenv';
import { ADDRESS_ENV, ADDRESS_KEYS, EMBEDDED, readAddresses, type AddressSettings } from '../cloud/addresses.js';
import { configEnvironment } from '../config/env.js';
import { displayName, loadConfig } from '../config/load.js';
import type { LoadedConfig } from '../config/schema.js';
import { ConfigError, describeError, formatIssue } from '../errors.js';
import { redact } from '../redact.js';
import { deviceNeeds } from '../config/device-needs.js';
import { fail, ok, warn, type CheckResult } from './system.js';

/** The service's environment file; doctor reads it so it sees what the service will see. */
export const SERVICE_ENV_FILE = '/etc/cortexd/env';

/**
 * The environment a service would run with: the process environment overlaid by the env file
 * when it exists and is readable (systemd sets the file's variables for the service, whatever the
 * shell running doctor has). Returns which file was read, if any.
 */
export function serviceEnvironment(
  file: string = process.env.CORTEX_SERVICE_ENV_FILE ?? SERVICE_ENV_FILE,
  base: NodeJS.ProcessEnv = process.env,
): { env: Record<string, string | undefined>; file?: string } {
  try {
    const fromFile = parseDotenv(readFileSync(file));
    // systemd treats `KEY=` as set-but-empty; the loader treats empty as unset, and so does doctor.
    return { env: { ...configEnvironment(base), ...fromFile }, file };
  } catch {
    return { env: configEnvironment(base) };
  }
}

export async function checkConfig(
  target: { name?: string; file?: string } | undefined,
  env: Record<string, string | undefined>,
): Promise<{ result: CheckResult; loaded?: LoadedConfig }> {
  const name = 'configuration';
  if (!target?.name && !target?.file) {
    return {
      result: warn(name, 'no configuration named: device checks below are generic', 'run `cortexd doctor NAME` with the name the service runs (cortexd@NAME)'),
    };
  }
  try {
    const loaded = await loadConfig(target, { env });
    const modes = Object.keys(loaded.config.modes).length;
    const where = `${displayName(loaded.file)} (${modes} mode${modes === 1 ? '' : 's'})`;
    // The API key warning has its own line below; other warnings make this one a warn.
    const others = loaded.warnings.filter((w) => !/api_key/.test(w));
    if (others.length > 0) {
      return {
        loaded,
        result: warn(
          name,
          `${where}: ${others.length} warning${others.length === 1 ? '' : 's'}, first: ${others[0]}`,
          `run \`cortexd check ${loaded.configName}\` for all of them`,
        ),
      };
    }
    return { loaded, result: ok(name, where) };
  } catch (err) {
    if (err instanceof ConfigError) {
      const first = err.issues[0];
      const detail = first ? formatIssue(first) : err.message;
      const more = err.issues.length > 1 ? ` (and ${err.issues.length - 1} more)` : '';
      return { result: fail(name, `${detail}${more}`, `run \`cortexd check ${target.name ?? `--config ${target.file}`}\` and fix each problem`) };
    }
    return { result: fail(name, describeError(err), 'run `cortexd check` for details') };
  }
}

/** True for a key the hosted service would accept the shape of: `key_live_...` or `key_test_...`. */
export function isRealKey(key: string): boolean {
  return /^key_(live|test)_\S+$/.test(key);
}

export function checkApiKey(loaded: LoadedConfig | undefined, env: Record<string, string | undefined>, addresses: AddressSettings | undefined): CheckResult {
  const name = 'API key';
  const fixText = 'put OM_API_KEY=key_live_... in /etc/cortexd/env (or api_key in the configuration)';
  if (addresses && ADDRESS_KEYS.every((k) => addresses[k] === EMBEDDED)) return ok(name, 'not needed: every address is embedded (the local service)');
  const key = loaded ? loaded.apiKey : (env.OM_API_KEY ?? '').trim();
  if (!key) return (loaded ? fail : warn)(name, 'no API key: the hosted service will answer 401', fixText);
  if (!isRealKey(key)) {
    const what = key === 'openmind_free' ? 'the placeholder "openmind_free"' : 'a value without the key_live_/key_test_ prefix';
    return fail(name, `the key is ${what}: the hosted service will refuse it`, fixText);
  }
  return ok(name, `${key.slice(0, 9)}... present`);
}

/** Resolves after a TCP connection to host:port opened, or rejects after `timeoutMs`. */
export function tcpReachable(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    });
  });
}

function hostPort(url: URL): { host: string; port: number } {
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  const mqttPort = url.protocol === 'mqtt:' ? 1883 : url.protocol === 'mqtts:' ? 8883 : undefined;
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : (mqttPort ?? (secure ? 443 : 80)) };
}

/**
 * One line for the hosted addresses (config `service` block under the CORTEX_* variables) and one
 * per model `base_url` of the configuration. `embedded` needs no network. A TCP connect with a
 * short timeout is the test: it proves DNS, routing and a listener without sending the key.
 */
export async function checkAddresses(
  loaded: LoadedConfig | undefined,
  env: Record<string, string | undefined>,
  timeoutMs = 2000,
): Promise<{ results: CheckResult[]; addresses?: AddressSettings }> {
  let addresses: AddressSettings;
  try {
    addresses = loaded?.addresses ?? readAddresses({}, env, 'environment');
  } catch (err) {
    const detail = err instanceof ConfigError ? err.issues.map(formatIssue).join('; ') : describeError(err);
    return { results: [fail('hosted addresses', detail, `fix ${Object.values(ADDRESS_ENV).join(', ')} or the configuration's service block`)] };
  }
  const targets = new Map<string, string[]>();
  const unset: string[] = [];
  for (const k of ADDRESS_KEYS) {
    const v = addresses[k];
    if (v === EMBEDDED) continue;
    if (v.includes('.invalid')) {
      unset.push(ADDRESS_ENV[k]);
      continue;
    }
    targets.set(v, [...(targets.get(v) ?? []), k]);
  }
  // Other servers the plugins call (a LocalLLM's base_url, MultiLLM members included), as their descriptors say.
  for (const { url, reason } of loaded ? (deviceNeeds(loaded.config).network ?? []) : []) {
    if (url !== EMBEDDED && URL.canParse(url)) targets.set(url, [...(targets.get(url) ?? []), reason]);
  }
  // The fleet broker (the `fleet` block under CORTEX_MQTT_URL): its URL carries no credentials once loaded.
  if (loaded?.fleet) targets.set(loaded.fleet.url, [...(targets.get(loaded.fleet.url) ?? []), 'fleet']);
  const results: CheckResult[] = [];
  const embedded = ADDRESS_KEYS.filter((k) => addresses[k] === EMBEDDED);
  if (unset.length > 0) {
    const status = loaded ? fail : warn;
    results.push(
      status(
        'hosted addresses',
        `not configured: ${unset.join(', ')}`,
        'set them in /etc/cortexd/env, or service.base_url in the configuration, or use "embedded" for the local service',
      ),
    );
  } else if (targets.size === 0) {
    results.push(ok('hosted addresses', `embedded (${embedded.join(', ')}): the local service runs in-process`));
  }
  const checks = [...targets].map(async ([address, uses]): Promise<CheckResult> => {
    const url = new URL(address);
    const { host, port } = hostPort(url);
    const shown = redact(`${url.protocol}//${url.host}`);
    const name = `reach ${shown}`;
    try {
      await tcpReachable(host, port, timeoutMs);
      return ok(name, `answers (${uses.join(', ')})`);
    } catch (err) {
      return fail(name, `${describeError(err)} (${uses.join(', ')})`, 'check the network and the address; a local inference server must be running');
    }
  });
  results.push(...(await Promise.all(checks)));
  return { results, addresses };
}
