// MqttInput: messages on MQTT topics (sensors, microcontrollers, ROS 2 through its MQTT bridge) as prompt lines, each through a small template.
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';
import { Observable, Subject } from 'rxjs';
import type { InputContext, InputFactory, InputMessage, InputPlugin } from '../../src/cortex/input.js';
import { CortexError, describeError } from '../../src/errors.js';
import { MqttSession } from '../../src/mqtt/session.js';
import { mqttSessionInput } from '../streams/mqtt-session.js';
import { parseBrokerUrl, type BrokerSettings } from '../../src/plugins/schemas/broker.js';
import { MqttInputSchema, type MqttInputConfig } from '../../src/plugins/schemas/mqtt.js';
import { BufferedInput } from './buffered-input.js';

export { MqttInputSchema };

/** One message as received. */
export interface MqttRaw {
  topic: string;
  payload: Buffer;
  at: number;
}

/** The input's link failed; `fatal` when retrying cannot help (refused credentials, an untrusted certificate). */
export class MqttInputError extends CortexError {
  readonly fatal: boolean;
  constructor(message: string, fatal: boolean) {
    super('mqtt_input', message);
    this.name = 'MqttInputError';
    this.fatal = fatal;
  }
}

/** The value at `path` (`a.b.0`) of a JSON value, as prompt text; '' when absent. */
function field(value: unknown, path: string[]): string {
  let v: unknown = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return '';
    v = (v as Record<string, unknown>)[key];
  }
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Fills the template: `{topic}`, `{payload}` (the text; a JSON payload compacted) and
 * `{payload.a.b}` (a field of a JSON payload). Other `{...}` are left as written.
 */
export function renderTemplate(template: string, topic: string, text: string): string {
  let json: unknown;
  let parsed = false;
  const parse = () => {
    if (!parsed) {
      parsed = true;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return json;
  };
  return template.replace(/\{(topic|payload)((?:\.[A-Za-z0-9_-]+)*)\}/g, (_, what: string, path: string) => {
    if (what === 'topic') return path ? _ : topic;
    if (!path) {
      const j = parse();
      return j !== undefined && typeof j === 'object' ? JSON.stringify(j) : text;
    }
    return field(parse(), path.slice(1).split('.'));
  });
}

/**
 * One clean MQTT session for the life of the plugin, run by its session actor (the input actor's
 * child `stream:mqtt`, actors/streams/session-machine.ts with src/backoff.ts; mqtt.js's own reconnect
 * is off). Every CONNACK subscribes to the topics (a clean session starts with none, so there is
 * never a second subscription); each message becomes a line through the template (payloads cut at
 * `max_payload_bytes`). A lost broker is the session actor's to retry: it backs off and reconnects,
 * the plugin and its buffer stay, and the prompt says once that the input is not available meanwhile.
 * A refusal retrying cannot cure (credentials, an untrusted certificate, a subscription the ACL
 * denies) is fatal and stops the input with the reason.
 */
export class MqttInput extends BufferedInput<MqttRaw> {
  readonly stream: NonNullable<InputPlugin['stream']>;
  private readonly session: MqttSession;
  private readonly events$ = new Subject<MqttRaw>();
  private streamedOnce = false;

  constructor(
    private readonly config: MqttInputConfig,
    broker: BrokerSettings,
    ctx?: Pick<InputContext, 'logger' | 'signal'>,
  ) {
    super({
      type: 'MqttInput',
      descriptor: config.descriptor ?? 'MQTT',
      bufferSize: config.buffer_size,
      policy: 'all',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
    this.session = new MqttSession({
      settings: broker,
      client: { clientId: `cortexd-in-${randomUUID().slice(0, 8)}`, clean: true },
      connect: (url, opts) => mqtt.connect(url, opts),
      onConnect: (sessionPresent) => {
        if (!sessionPresent) this.subscribeTopics();
      },
      onMessage: (topic, payload) => this.events$.next({ topic, payload, at: Date.now() }),
    });
    this.stream = { kind: 'mqtt', input: mqttSessionInput(this.session), onEvent: (e) => this.onSessionEvent(e) };
  }

  private subscribeTopics(): void {
    this.session.subscribe(Object.fromEntries(this.config.topics.map((t) => [t, { qos: this.config.qos }]))).catch((err: unknown) => {
      if (this.isStopped || !this.session.connected) return;
      this.events$.error(new MqttInputError(describeError(err), true));
    });
  }

  private onSessionEvent(e: { type: string; [k: string]: unknown }): void {
    if (e.type === 'mqtt.state') {
      const state = String(e.state);
      if (state === 'streaming') {
        this.streamedOnce = true;
        this.available();
      } else if (state === 'backingOff' || (state === 'connecting' && this.streamedOnce)) this.unavailable('reconnecting');
    } else if (e.type === 'mqtt.failed') {
      this.unavailable('stopped');
      this.events$.error(new MqttInputError(String(e.reason), true));
    }
  }

  protected source(): Observable<MqttRaw> {
    return new Observable<MqttRaw>((sub) => {
      const s = this.events$.subscribe(sub);
      return () => {
        s.unsubscribe();
        void this.session.stop(undefined, 1000);
      };
    });
  }

  protected override async release(): Promise<void> {
    await this.session.stop(undefined, 1000);
  }

  protected toMessage(raw: MqttRaw): InputMessage | undefined {
    const max = this.config.max_payload_bytes;
    const cut = raw.payload.length > max;
    const text = raw.payload.subarray(0, max).toString('utf8') + (cut ? ` [cut: ${raw.payload.length} bytes]` : '');
    const line = renderTemplate(this.config.template, raw.topic, text).trim();
    return line ? { timestamp: raw.at, text: line, final: this.config.final } : undefined;
  }
}

/** The MqttInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createMqttInput: InputFactory = (raw, ctx) => {
  const config = MqttInputSchema.parse(raw ?? {});
  const parsed = parseBrokerUrl(config.url);
  if (!parsed.ok) throw new MqttInputError(`url: ${parsed.message}`, true);
  const username = config.username ?? parsed.username;
  const password = config.password ?? parsed.password;
  const broker: BrokerSettings = {
    url: parsed.url,
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(config.ca_file ? { caFile: config.ca_file } : {}),
    ...(config.cert_file ? { certFile: config.cert_file } : {}),
    ...(config.key_file ? { keyFile: config.key_file } : {}),
    ...(config.keepalive_seconds ? { keepaliveS: config.keepalive_seconds } : {}),
  };
  return new MqttInput(config, broker, ctx);
};
