// How cortexd reaches an MQTT broker: the broker fields shared by the fleet block and the MQTT plugins, and checks of URLs and topics
// zod only, no client code.
import { z } from 'zod';

/** Schemes the client dials: plain TCP, TLS, and MQTT over WebSocket (plain or TLS). */
export const MQTT_SCHEMES = ['mqtt:', 'mqtts:', 'ws:', 'wss:'] as const;

/** Default port of each scheme (mosquitto's defaults; WebSocket listeners have none, so 80/443). */
export const DEFAULT_PORTS: Record<(typeof MQTT_SCHEMES)[number], number> = { 'mqtt:': 1883, 'mqtts:': 8883, 'ws:': 80, 'wss:': 443 };

/** The broker fields every MQTT user of a configuration accepts (the fleet block, MqttInput, the mqtt connector). */
export const BrokerFields = {
  /** `mqtt://host:1883`, `mqtts://host:8883` (TLS), `ws://`/`wss://host/mqtt`; credentials in the URL are accepted and never shown. */
  url: z.string().min(1).optional(),
  username: z.string().min(1).optional(),
  password: z.string().optional(),
  /** PEM file of the CA that signed the broker's certificate (mqtts/wss); default: the system's CAs. */
  ca_file: z.string().min(1).optional(),
  /** PEM certificate and key of this client, for brokers that require client certificates. */
  cert_file: z.string().min(1).optional(),
  key_file: z.string().min(1).optional(),
  /** Seconds between keepalive pings. */
  keepalive_seconds: z.number().int().min(5).max(3600).optional(),
};

/** What a client needs to dial a broker, resolved (file paths absolute, credentials out of the URL). */
export interface BrokerSettings {
  /** The broker URL without credentials. */
  url: string;
  username?: string;
  password?: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  keepaliveS?: number;
}

/**
 * Checks a broker URL and takes credentials out of it. The message of a bad URL never repeats it
 * (it may hold a password): it names what is wrong.
 */
export function parseBrokerUrl(raw: string): { ok: true; url: string; username?: string; password?: string } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, message: 'not a URL (expected mqtt://host:1883, mqtts://host:8883, ws:// or wss://)' };
  }
  if (!(MQTT_SCHEMES as readonly string[]).includes(url.protocol)) {
    return { ok: false, message: `scheme ${url.protocol.replace(':', '')} is not an MQTT scheme (expected mqtt, mqtts, ws or wss)` };
  }
  if (!url.hostname) return { ok: false, message: 'the URL names no host' };
  const username = url.username ? decodeURIComponent(url.username) : undefined;
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  url.username = '';
  url.password = '';
  const clean = url.protocol.startsWith('ws') ? url.toString() : `${url.protocol}//${url.host}`;
  return { ok: true, url: clean, ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) };
}

/** `mqtts://host:8883`: the broker as messages and logs show it (scheme, host, port; never credentials or a path). */
export function brokerLabel(url: string): string {
  try {
    const u = new URL(url);
    const port = u.port || String(DEFAULT_PORTS[u.protocol as keyof typeof DEFAULT_PORTS] ?? '');
    return `${u.protocol}//${u.hostname}${port ? `:${port}` : ''}`;
  } catch {
    return 'the broker';
  }
}

/** A topic level cortexd builds topics from (robot ids, prefixes): no wildcards, no separators, no control characters. */
export const TOPIC_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** A topic prefix: levels of TOPIC_ID characters separated by `/`. */
export const TOPIC_PREFIX = /^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*$/;

/** An MQTT topic filter or name a user wrote: non-empty, at most 1024 bytes, no NUL; `+`/`#` only as whole levels. */
export function topicProblem(topic: string, filter: boolean): string | undefined {
  if (topic.length === 0) return 'a topic cannot be empty';
  if (Buffer.byteLength(topic) > 1024) return 'a topic is at most 1024 bytes here';
  if (topic.includes('\u0000')) return 'a topic cannot contain NUL';
  const levels = topic.split('/');
  for (const [i, level] of levels.entries()) {
    if (!filter && /[+#]/.test(level)) return 'a topic to publish to cannot contain + or #';
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) return '# must be a whole level and the last one';
    if (level.includes('+') && level !== '+') return '+ must be a whole level';
  }
  return undefined;
}
