// Turns broker settings into mqtt.js client options (TLS files read here), and client errors into one-line reasons, fatal or not.
import { readFileSync } from 'node:fs';
import type { IClientOptions } from 'mqtt';
import { CortexError, describeError } from '../errors.js';
import { brokerLabel, type BrokerSettings } from '../plugins/schemas/broker.js';

/** A broker setting that cannot be used (a certificate file that cannot be read). */
export class MqttSetupError extends CortexError {
  constructor(message: string) {
    super('mqtt_setup', message);
    this.name = 'MqttSetupError';
  }
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new MqttSetupError(`cannot read the ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? describeError(err)}`);
  }
}

/**
 * mqtt.js options for `settings`: MQTT 5, no automatic reconnect (the caller owns retries, with
 * src/backoff.ts), offline QoS 0 messages dropped rather than queued without bound.
 */
export function clientOptions(settings: BrokerSettings, extra: Partial<IClientOptions> = {}): IClientOptions {
  return {
    protocolVersion: 5,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
    queueQoSZero: false,
    keepalive: settings.keepaliveS ?? 30,
    ...(settings.username !== undefined ? { username: settings.username } : {}),
    ...(settings.password !== undefined ? { password: settings.password } : {}),
    ...(settings.caFile ? { ca: readPem(settings.caFile, 'CA file') } : {}),
    ...(settings.certFile ? { cert: readPem(settings.certFile, 'client certificate') } : {}),
    ...(settings.keyFile ? { key: readPem(settings.keyFile, 'client key') } : {}),
    ...extra,
  };
}

/** MQTT 5 reason codes a client meets at connect, publish or subscribe (names as in the standard). */
const REASONS: Record<number, string> = {
  128: 'unspecified error',
  129: 'malformed packet',
  130: 'protocol error',
  131: 'implementation specific error',
  132: 'unsupported protocol version',
  133: 'client identifier not valid',
  134: 'bad user name or password',
  135: 'not authorized',
  136: 'server unavailable',
  137: 'server busy',
  138: 'banned',
  140: 'bad authentication method',
  144: 'topic name invalid',
  149: 'packet too large',
  151: 'quota exceeded',
  153: 'payload format invalid',
};

export function reasonName(code: number): string {
  return REASONS[code] ?? `reason code ${code}`;
}

/** Connect refusals that the same settings will meet again: retrying cannot help. */
const FATAL_CONNACK = new Set([132, 133, 134, 135, 138, 140]);

/** TLS failures of the broker's certificate: the CA file (or the broker's certificate) must change first. */
const TLS_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export interface MqttFailure {
  /** One line for people: what failed and what to do; never credentials. */
  message: string;
  /** True when retrying with the same settings cannot succeed (bad credentials, an untrusted certificate). */
  fatal: boolean;
}

/** Describes an error the client emitted while connecting or connected to `url` as `username`. */
export function describeConnectError(err: unknown, url: string, username?: string): MqttFailure {
  const label = brokerLabel(url);
  const e = err as { code?: unknown; message?: string };
  if (typeof e.code === 'number') {
    const reason = reasonName(e.code);
    if (e.code === 134 || e.code === 135) {
      return {
        message: `${label} refused the connection${username !== undefined ? ` of user "${username}"` : ' without a user name'}: ${reason} (wrong user name or password, or the user may not connect); not retrying until the settings change`,
        fatal: true,
      };
    }
    return {
      message: `${label} refused the connection: ${reason}${FATAL_CONNACK.has(e.code) ? '; not retrying until the settings change' : ''}`,
      fatal: FATAL_CONNACK.has(e.code),
    };
  }
  if (typeof e.code === 'string' && TLS_CODES.has(e.code)) {
    return {
      message: `TLS to ${label} failed: the broker's certificate is not trusted (${e.code}): name the CA that signed it in ca_file (or CORTEX_MQTT_CA_FILE); not retrying`,
      fatal: true,
    };
  }
  if (e.code === 'ECONNREFUSED') return { message: `${label} refused the TCP connection (is the broker running?)`, fatal: false };
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return { message: `${label}: the host name does not resolve`, fatal: false };
  if (typeof e.message === 'string' && /connack timeout/i.test(e.message)) return { message: `${label} did not answer the connect within 10 s`, fatal: false };
  return { message: `${label}: ${describeError(err)}`, fatal: false };
}

/** Describes a refused publish or subscribe (`Publish error: Not authorized`, code 135). */
export function describeOperationError(err: unknown, what: string): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'number')
    return `the broker refused to ${what}: ${reasonName(code)}${code === 135 ? ' (the ACL does not allow this user on that topic)' : ''}`;
  return `${what} failed: ${describeError(err)}`;
}
