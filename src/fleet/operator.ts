// The operator's end of the fleet: one MQTT connection that lists robots, watches them and sends commands, waiting for each reply.
import { createHash, randomBytes, type KeyObject } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { FLEET_ENV } from '../config/fleet.js';
import { CortexError, describeError } from '../errors.js';
import { readRegularFile } from '../config/read-file.js';
import { parsePrivateKey, signCommand } from './identity.js';
import { clientOptions, describeConnectError, describeOperationError } from '../mqtt/options.js';
import { noDelay } from '../mqtt/session.js';
import { parseBrokerUrl, TOPIC_ID, TOPIC_PREFIX, type BrokerSettings } from '../plugins/schemas/broker.js';
import {
  MAX_COMMAND_BYTES,
  FleetReply,
  RobotState,
  Status,
  makeCommand,
  parsePayload,
  parseTopic,
  topicOf,
  type CommandBody,
  type FleetCommand,
  type TopicKind,
} from './protocol.js';

/** A fleet command line that cannot run: no broker named, a bad robot id. Exit 2 at the CLI. */
export class FleetUsageError extends CortexError {
  constructor(message: string) {
    super('fleet_usage', message);
    this.name = 'FleetUsageError';
  }
}

export interface OperatorSettings extends BrokerSettings {
  prefix: string;
  /** The operator's Ed25519 key (from the PEM file in CORTEX_FLEET_OPERATOR_KEY): every command is signed with it. */
  signingKey?: KeyObject;
}

/** The variable naming the operator's private key file (`cortexd fleet keygen` writes one). */
export const OPERATOR_KEY_ENV = 'CORTEX_FLEET_OPERATOR_KEY';

function readSigningKey(path: string): KeyObject {
  try {
    return parsePrivateKey(readRegularFile(path, 64 * 1024));
  } catch (err) {
    throw new FleetUsageError(`${OPERATOR_KEY_ENV}=${path}: ${describeError(err)}`);
  }
}

/**
 * The broker an operator talks to: flags over the CORTEX_MQTT_* variables (process environment over
 * `.env`). The password is read from CORTEX_MQTT_PASSWORD or the URL only, never from a flag (flags
 * show in `ps`).
 */
export function operatorSettings(
  env: Record<string, string | undefined>,
  flags: { url?: string; username?: string; caFile?: string; prefix?: string },
): OperatorSettings {
  const get = (k: keyof typeof FLEET_ENV) => (env[FLEET_ENV[k]]?.trim() ? env[FLEET_ENV[k]]!.trim() : undefined);
  const raw = flags.url ?? get('url');
  if (!raw) throw new FleetUsageError(`no broker: set ${FLEET_ENV.url} (e.g. mqtts://broker.lan:8883) or pass --url`);
  const parsed = parseBrokerUrl(raw);
  if (!parsed.ok) throw new FleetUsageError(`${flags.url ? '--url' : FLEET_ENV.url}: ${parsed.message}`);
  const prefix = flags.prefix ?? get('topic_prefix') ?? 'cortexd';
  if (!TOPIC_PREFIX.test(prefix)) throw new FleetUsageError('the topic prefix is levels of letters, digits, _ . - separated by /');
  const username = flags.username ?? get('username') ?? parsed.username;
  const password = env[FLEET_ENV.password] || parsed.password;
  const caFile = flags.caFile ?? get('ca_file');
  const certFile = get('cert_file');
  const keyFile = get('key_file');
  const signingFile = env[OPERATOR_KEY_ENV]?.trim();
  return {
    ...(signingFile ? { signingKey: readSigningKey(signingFile) } : {}),
    url: parsed.url,
    prefix,
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(caFile ? { caFile } : {}),
    ...(certFile ? { certFile } : {}),
    ...(keyFile ? { keyFile } : {}),
  };
}

export function checkRobotId(robot: string): void {
  if (!TOPIC_ID.test(robot)) throw new FleetUsageError(`not a robot id: ${JSON.stringify(robot.slice(0, 80))} (1 to 64 letters, digits, _ . -)`);
}

/** One robot as `fleet ls` shows it. */
export interface RobotListing {
  robot: string;
  online: boolean;
  mode: string | null;
  health: string;
  /** Newest time the robot said anything (status or state), ms since the epoch. */
  last_seen: number | null;
  status?: Status;
  state?: RobotState;
}

/** A message on a fleet topic, parsed as far as its kind allows. */
export interface FleetMessage {
  robot: string;
  kind: TopicKind;
  payload: unknown;
}

/** Summary of a robot's health: `ok`, or the parts that are not, one phrase each. */
export function healthSummary(state: RobotState | undefined): string {
  if (!state) return 'unknown';
  if (state.health.ok) return 'ok';
  const bad: string[] = [];
  for (const [part, record] of Object.entries(state.health) as Array<[string, unknown]>) {
    if (typeof record !== 'object' || record === null) continue;
    for (const [name, h] of Object.entries(record as Record<string, { state: string }>)) {
      if (!['ok', 'streaming', 'connecting', 'connected'].includes(h.state)) bad.push(`${part.replace(/s$/, '')} ${name} ${h.state}`);
    }
  }
  return bad.join('; ') || 'not ok';
}

export class FleetOperator {
  private constructor(
    private readonly client: MqttClient,
    readonly settings: OperatorSettings,
  ) {}

  /** Connects once (no retries: a command line says what failed and exits). */
  static async connect(settings: OperatorSettings, timeoutMs = 10_000): Promise<FleetOperator> {
    const client = mqtt.connect(
      settings.url,
      clientOptions(settings, { clientId: `cortexd-cli-${randomBytes(6).toString('hex')}`, clean: true, connectTimeout: timeoutMs }),
    );
    await new Promise<void>((resolve, reject) => {
      let failure: unknown;
      client.once('connect', () => (noDelay(client), resolve()));
      client.on('error', (err) => (failure = err));
      client.once('close', () => {
        const f = describeConnectError(failure ?? new Error('connection closed'), settings.url, settings.username);
        reject(new CortexError('fleet_connect', f.message.replace(/; not retrying.*$/, '')));
      });
    });
    client.removeAllListeners('close');
    client.on('error', () => {});
    return new FleetOperator(client, settings);
  }

  topic(robot: string, kind: TopicKind): string {
    return topicOf(this.settings.prefix, robot, kind);
  }

  private subscribe(filters: string[], qos: 0 | 1 = 1): Promise<void> {
    return new Promise((resolve, reject) => {
      this.client.subscribe(Object.fromEntries(filters.map((f) => [f, { qos }])), (err, granted) => {
        if (err) return reject(new CortexError('fleet_subscribe', describeOperationError(err, `subscribe to ${filters.join(', ')}`)));
        const refused = (granted ?? []).find((g) => g.qos >= 128);
        if (refused) return reject(new CortexError('fleet_subscribe', describeOperationError({ code: refused.qos }, `subscribe to ${refused.topic}`)));
        resolve();
      });
    });
  }

  /** Calls `fn` for every message on a fleet topic, parsed; returns a function that stops it. */
  onMessage(fn: (m: FleetMessage) => void): () => void {
    const handler = (topic: string, payload: Buffer) => {
      const where = parseTopic(this.settings.prefix, topic);
      if (!where) return;
      let value: unknown = payload.toString();
      try {
        value = JSON.parse(payload.toString());
      } catch {
        /* kept as text */
      }
      fn({ robot: where.robot, kind: where.kind, payload: value });
    };
    this.client.on('message', handler);
    return () => this.client.off('message', handler);
  }

  /**
   * The robots whose retained status or state the broker holds. Retained messages arrive right after
   * the subscription; the list is complete when none arrived for `quietMs` (at most `maxMs` in all).
   */
  async list(quietMs = 300, maxMs = 3000): Promise<RobotListing[]> {
    const robots = new Map<string, RobotListing>();
    let last = Date.now();
    const stop = this.onMessage((m) => {
      last = Date.now();
      const r = robots.get(m.robot) ?? { robot: m.robot, online: false, mode: null, health: 'unknown', last_seen: null };
      if (m.kind === 'status') {
        const s = Status.safeParse(m.payload);
        if (s.success) {
          r.status = s.data;
          r.online = s.data.status === 'online';
          if (s.data.at !== undefined) r.last_seen = Math.max(r.last_seen ?? 0, s.data.at);
        }
      } else if (m.kind === 'state') {
        const s = RobotState.safeParse(m.payload);
        if (s.success) {
          r.state = s.data;
          r.mode = s.data.mode;
          r.health = healthSummary(s.data);
          r.last_seen = Math.max(r.last_seen ?? 0, s.data.updated_at);
        }
      }
      robots.set(m.robot, r);
    });
    try {
      await this.subscribe([`${this.settings.prefix}/+/status`, `${this.settings.prefix}/+/state`]);
      const started = Date.now();
      last = started;
      while (Date.now() - last < quietMs && Date.now() - started < maxMs) await new Promise((r) => setTimeout(r, 50));
    } finally {
      stop();
    }
    return [...robots.values()].sort((a, b) => a.robot.localeCompare(b.robot));
  }

  /** Subscribes to what `fleet watch` shows: status, state, events (and metrics), of one robot or all. */
  async watch(robot: string | undefined, withMetrics: boolean): Promise<void> {
    const r = robot ?? '+';
    const kinds: TopicKind[] = ['status', 'state', 'events', 'replies', ...(withMetrics ? (['metrics'] as const) : [])];
    await this.subscribe(
      kinds.map((k) => topicOf(this.settings.prefix, r, k)),
      0,
    );
  }

  /**
   * Sends one command and waits for its reply (matched by id). The reply topic is subscribed before
   * the command goes out; the command is published at QoS 1, so a refusal by the broker's ACL is an
   * error here, and a robot that is offline gets it when it reconnects (until it expires).
   */
  async send(
    robot: string,
    body: CommandBody,
    opts: { ttlMs: number; timeoutMs: number },
  ): Promise<{ reply?: FleetReply; command: FleetCommand; status?: Status }> {
    checkRobotId(robot);
    const made = makeCommand(body, opts.ttlMs);
    const command = this.settings.signingKey ? signCommand(made, robot, this.settings.signingKey) : made;
    const size = Buffer.byteLength(JSON.stringify(command));
    if (size > MAX_COMMAND_BYTES) {
      throw new CortexError(
        'fleet_too_large',
        `the ${body.command} command is ${size} bytes; a command is at most ${MAX_COMMAND_BYTES} bytes (robots and the shipped broker refuse larger ones)`,
      );
    }
    let status: Status | undefined;
    let resolveReply!: (r: FleetReply) => void;
    const replied = new Promise<FleetReply>((resolve) => (resolveReply = resolve));
    const stop = this.onMessage((m) => {
      if (m.robot !== robot) return;
      if (m.kind === 'status') {
        const s = Status.safeParse(m.payload);
        if (s.success) status = s.data;
      } else if (m.kind === 'replies') {
        const r = FleetReply.safeParse(m.payload);
        if (r.success && r.data.id === command.id) resolveReply(r.data);
      }
    });
    try {
      await this.subscribe([this.topic(robot, 'replies'), this.topic(robot, 'status')]);
      await new Promise<void>((resolve, reject) =>
        this.client.publish(this.topic(robot, 'commands'), JSON.stringify(command), { qos: 1 }, (err) =>
          err ? reject(new CortexError('fleet_publish', describeOperationError(err, `publish to ${this.topic(robot, 'commands')}`))) : resolve(),
        ),
      );
      let timer: NodeJS.Timeout | undefined;
      const reply = await Promise.race([replied, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), opts.timeoutMs)))]);
      clearTimeout(timer);
      return { command, ...(reply ? { reply } : {}), ...(status ? { status } : {}) };
    } finally {
      stop();
    }
  }

  /** Waits until the robot's retained state names the configuration with `sha256` (after a reload); false after `ms`. */
  async waitForConfig(robot: string, sha256: string, ms: number): Promise<boolean> {
    let resolveSeen!: (v: boolean) => void;
    const seen = new Promise<boolean>((resolve) => (resolveSeen = resolve));
    const stop = this.onMessage((m) => {
      if (m.robot !== robot || m.kind !== 'state') return;
      const s = parsePayload(RobotState, JSON.stringify(m.payload));
      if (s.ok && s.value.config_sha256 === sha256) resolveSeen(true);
    });
    const timer = setTimeout(() => resolveSeen(false), ms);
    try {
      await this.subscribe([this.topic(robot, 'state')]);
      return await seen;
    } finally {
      clearTimeout(timer);
      stop();
    }
  }

  async close(): Promise<void> {
    await this.client.endAsync().catch(() => undefined);
  }
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}
