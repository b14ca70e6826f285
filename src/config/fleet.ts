// The `fleet` block and the CORTEX_MQTT_* variables: whether a robot joins a fleet broker, under which id, how it is secured; resolved once at load.
import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { ConfigIssue } from '../errors.js';
import { redact } from '../redact.js';
import { BrokerFields, TOPIC_ID, TOPIC_PREFIX, parseBrokerUrl, type BrokerSettings } from '../plugins/schemas/broker.js';
import { AllowedPrograms } from './allowed-programs.js';

/** Environment variables of the fleet channel; each wins over the block's field when set and non-empty. */
export const FLEET_ENV = {
  url: 'CORTEX_MQTT_URL',
  username: 'CORTEX_MQTT_USERNAME',
  password: 'CORTEX_MQTT_PASSWORD',
  ca_file: 'CORTEX_MQTT_CA_FILE',
  cert_file: 'CORTEX_MQTT_CERT_FILE',
  key_file: 'CORTEX_MQTT_KEY_FILE',
  robot_id: 'CORTEX_MQTT_ROBOT_ID',
  topic_prefix: 'CORTEX_MQTT_PREFIX',
} as const;

/** The one-line form of an operator's Ed25519 public key (src/fleet/identity.ts). */
export const OPERATOR_KEY = /^ed25519:[A-Za-z0-9_-]{43}$/;

export const FleetBlock = z
  .looseObject({
    /** Default: on when a broker is named (`url` or CORTEX_MQTT_URL); `false` keeps this robot off the fleet whatever the environment says. */
    enabled: z.boolean().optional(),
    ...BrokerFields,
    /** The robot's id in topics; default CORTEX_MQTT_ROBOT_ID, else the URID, else the host name. */
    robot_id: z.string().optional(),
    /** First topic level(s): `<prefix>/<robot>/state`. */
    topic_prefix: z.string().optional(),
    /** Publish what the robot hears and says (input text, prompts, answer text) on `events`; default only that it answered. */
    share_transcripts: z.boolean().default(false),
    /** Seconds between two `metrics` messages; 0 turns them off. */
    metrics_interval_seconds: z.number().min(0).max(3600).default(10),
    /** Longest lifetime a command may claim (`expires_at` minus now); longer ones are refused. */
    command_max_ttl_seconds: z.number().positive().max(86_400).default(300),
    /** How long the broker keeps this robot's session (and the QoS 1 commands sent to it) while it is offline. */
    session_expiry_seconds: z
      .number()
      .int()
      .nonnegative()
      .max(2 ** 32 - 1)
      .default(86_400),
    /** Cap of the wait between two connection attempts (src/backoff.ts: 500 ms doubling, equal jitter). */
    backoff_max_ms: z.number().int().min(500).max(600_000).default(30_000),
    /**
     * Accept `reload` commands (a configuration pushed by the fleet); CORTEX_FLEET_RELOAD=off wins.
     * Read from the robot's own file at start only: a pushed configuration cannot change it.
     */
    reload: z.boolean().default(true),
    /**
     * Programs a pushed configuration (fleet reload, a watched file another user can write) may start:
     * exact program and arguments (src/config/program-guard.ts). Read from the robot's own file at
     * start only, with CORTEX_ALLOWED_PROGRAMS (a file); a pushed configuration's list is ignored.
     */
    allowed_programs: AllowedPrograms.default([]),
    /**
     * Public keys (`ed25519:...`, from `cortexd fleet keygen`) of the operators whose signed commands
     * this robot trusts: a release and a reload that relaxes safety need such a signature when any is
     * listed, and on a broker that lets in clients without credentials. Read from the robot's own file
     * at start only.
     */
    operator_keys: z.array(z.string()).max(64).default([]),
    /**
     * A broker that lets in clients without credentials lets anyone who reaches it command the robot:
     * such a robot refuses every unsigned fleet command but estop unless this is true (the operator
     * accepts the risk). Releases and safety-relaxing reloads need a signed command even then.
     */
    accept_anonymous_broker: z.boolean().default(false),
  })
  .describe('the fleet channel: state, events and metrics on an MQTT broker, commands from it (off unless a broker is named)');
export type FleetBlock = z.infer<typeof FleetBlock>;

/** The fleet channel's settings, resolved at load (durations in ms). */
export interface FleetSettings extends BrokerSettings {
  robotId: string;
  prefix: string;
  shareTranscripts: boolean;
  metricsIntervalMs: number;
  commandMaxTtlMs: number;
  sessionExpiryS: number;
  backoffMaxMs: number;
  /** Operators' public keys (`ed25519:...`), checked at load; none when absent. */
  operatorKeys?: string[];
  /** Accept unsigned commands from a broker that lets anyone in; false when absent. */
  acceptAnonymousBroker?: boolean;
}

export interface FleetRead {
  settings?: FleetSettings;
  problems: Array<Pick<ConfigIssue, 'path' | 'message'>>;
  warnings: Array<{ path: string; message: string }>;
}

/** A robot id made from the host name: characters topics cannot hold become `-`. */
export function hostRobotId(name = hostname()): string {
  const id = name
    .replace(/[^A-Za-z0-9_.-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  return id || 'robot';
}

/** A fleet field and where it came from: the variable when set and non-empty, else the block's field (trimmed, but a password). */
type FleetField = (key: keyof typeof FLEET_ENV) => { value: string | undefined; path: string };

function fleetField(block: FleetBlock | undefined, env: Record<string, string | undefined>): FleetField {
  return (key) => {
    const e = env[FLEET_ENV[key]];
    if (e !== undefined && e.trim() !== '') return { value: key === 'password' ? e : e.trim(), path: FLEET_ENV[key] };
    const c = (block as Record<string, unknown> | undefined)?.[key];
    return { value: typeof c === 'string' && c.trim() !== '' ? (key === 'password' ? c : c.trim()) : undefined, path: `fleet.${key}` };
  };
}

/** The robot's id: the field, else the URID, else the host name (with a warning). */
function readRobotId(robot: ReturnType<FleetField>, urid: string | undefined, problems: FleetRead['problems'], warnings: FleetRead['warnings']): string {
  const robotId = robot.value ?? urid;
  if (robotId === undefined) {
    const id = hostRobotId();
    warnings.push({
      path: 'fleet.robot_id',
      message: `no robot id (fleet.robot_id, ${FLEET_ENV.robot_id} or URID): the fleet knows this robot by its host name "${id}"`,
    });
    return id;
  }
  if (!TOPIC_ID.test(robotId))
    problems.push({ path: robot.path, message: 'a robot id is 1 to 64 letters, digits, _ . - (it is a topic level), starting with a letter or digit' });
  return robotId;
}

/** The TLS files, relative to the configuration's folder `base`; each must be a readable regular file, and a certificate comes with its key. */
function readCertificateFiles(pick: FleetField, base: string, problems: FleetRead['problems']): Partial<Record<'ca_file' | 'cert_file' | 'key_file', string>> {
  const files: Partial<Record<'ca_file' | 'cert_file' | 'key_file', string>> = {};
  for (const key of ['ca_file', 'cert_file', 'key_file'] as const) {
    const f = pick(key);
    if (f.value === undefined) continue;
    const path = isAbsolute(f.value) ? f.value : resolve(base, f.value);
    try {
      if (!statSync(path).isFile()) problems.push({ path: f.path, message: `not a regular file: ${path}` });
    } catch (err) {
      problems.push({ path: f.path, message: `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}` });
    }
    files[key] = path;
  }
  if ((files.cert_file === undefined) !== (files.key_file === undefined))
    problems.push({ path: 'fleet.cert_file', message: 'a client certificate needs both cert_file and key_file' });
  return files;
}

/**
 * Reads the fleet block under the CORTEX_MQTT_* variables. Per field: the variable when set and
 * non-empty, else the block's field. Credentials may sit in the URL (`mqtt://user:pass@host`); explicit
 * fields win over them. Relative certificate paths are relative to the configuration file. No problem
 * repeats a URL or a password.
 */
export function readFleet(
  block: FleetBlock | undefined,
  env: Record<string, string | undefined>,
  ids: { urid?: string | undefined; configFile: string },
): FleetRead {
  const problems: FleetRead['problems'] = [];
  const warnings: FleetRead['warnings'] = [];
  const pick = fleetField(block, env);
  const url = pick('url');
  const enabled = block?.enabled ?? url.value !== undefined;
  if (!enabled) return { problems, warnings };
  if (url.value === undefined) {
    problems.push({ path: 'fleet.url', message: `the fleet is enabled but names no broker: set fleet.url or ${FLEET_ENV.url}` });
    return { problems, warnings };
  }
  const parsed = parseBrokerUrl(url.value);
  if (!parsed.ok) problems.push({ path: url.path, message: redact(parsed.message) });

  const robotId = readRobotId(pick('robot_id'), ids.urid, problems, warnings);
  const prefix = pick('topic_prefix');
  if (prefix.value !== undefined && !TOPIC_PREFIX.test(prefix.value)) {
    problems.push({ path: prefix.path, message: 'a topic prefix is one or more levels of letters, digits, _ . - separated by / (no + or #)' });
  }

  const files = readCertificateFiles(pick, dirname(ids.configFile), problems);
  const b = block ?? FleetBlock.parse({});
  b.operator_keys.forEach((k, i) => {
    if (!OPERATOR_KEY.test(k.trim()))
      problems.push({
        path: `fleet.operator_keys[${i}]`,
        message: 'an operator key is "ed25519:" followed by 43 base64url characters (cortexd fleet keygen prints one)',
      });
  });
  if (problems.length > 0 || !parsed.ok) return { problems, warnings };

  const username = pick('username').value ?? parsed.username;
  const password = pick('password').value ?? parsed.password;
  if (username === undefined && password === undefined && files.cert_file === undefined) {
    warnings.push({
      path: 'fleet',
      message: b.accept_anonymous_broker
        ? 'the robot joins the broker without credentials, so anyone who reaches the broker can send it commands; accepted (fleet.accept_anonymous_broker), but a release or a reload that relaxes safety needs a command signed with a key of fleet.operator_keys'
        : `the robot joins the broker without credentials (no ${FLEET_ENV.username}/${FLEET_ENV.password} or client certificate), so anyone who reaches the broker could command it: it will refuse every fleet command but estop; give the broker users (systemd/mosquitto/) or sign commands (fleet.operator_keys), or set fleet.accept_anonymous_broker: true to accept the risk`,
    });
  }
  return {
    problems,
    warnings,
    settings: {
      url: parsed.url,
      ...(username !== undefined ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(files.ca_file ? { caFile: files.ca_file } : {}),
      ...(files.cert_file ? { certFile: files.cert_file } : {}),
      ...(files.key_file ? { keyFile: files.key_file } : {}),
      ...(b.keepalive_seconds !== undefined ? { keepaliveS: b.keepalive_seconds } : {}),
      robotId,
      prefix: prefix.value ?? 'cortexd',
      shareTranscripts: b.share_transcripts,
      metricsIntervalMs: Math.round(b.metrics_interval_seconds * 1000),
      commandMaxTtlMs: Math.round(b.command_max_ttl_seconds * 1000),
      sessionExpiryS: b.session_expiry_seconds,
      backoffMaxMs: b.backoff_max_ms,
      operatorKeys: b.operator_keys,
      acceptAnonymousBroker: b.accept_anonymous_broker,
    },
  };
}
