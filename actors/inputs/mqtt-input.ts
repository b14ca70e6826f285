// MqttInput: messages on MQTT topics (sensors, microcontrollers, ROS 2 through its MQTT bridge) as prompt lines, each through a small template.
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';
import { Observable } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { CortexError } from '../../src/errors.js';
import { clientOptions, describeConnectError, describeOperationError } from '../../src/mqtt/options.js';
import { noDelay } from '../../src/mqtt/session.js';
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
 * Listening opens one clean MQTT session, subscribes to the topics and turns each message into a
 * line through the template (payloads cut at `max_payload_bytes`). A lost connection ends the raw
 * stream with an error: the input actor restarts the input with its backoff (the one retry layer
 * of inputs); a refusal retrying cannot cure is fatal and stops the input with the reason.
 */
export class MqttInput extends BufferedInput<MqttRaw> {
  constructor(
    private readonly config: MqttInputConfig,
    private readonly broker: BrokerSettings,
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
  }

  protected source(): Observable<MqttRaw> {
    return new Observable<MqttRaw>((sub) => {
      let failure: unknown;
      let connected = false;
      const client = mqtt.connect(this.broker.url, clientOptions(this.broker, { clientId: `cortexd-in-${randomUUID().slice(0, 8)}`, clean: true }));
      client.on('error', (err) => (failure = err));
      client.on('connect', () => {
        noDelay(client);
        connected = true;
        client.subscribe(Object.fromEntries(this.config.topics.map((t) => [t, { qos: this.config.qos }])), (err, granted) => {
          const refused = (granted ?? []).find((g) => g.qos >= 128);
          if (err || refused) {
            const message = describeOperationError(err ?? { code: refused!.qos }, `subscribe to ${refused?.topic ?? this.config.topics.join(', ')}`);
            sub.error(new MqttInputError(message, true));
          }
        });
      });
      client.on('message', (topic, payload) => sub.next({ topic, payload, at: Date.now() }));
      client.on('close', () => {
        const f = describeConnectError(
          failure ?? new Error(connected ? 'the broker closed the connection' : 'connection closed'),
          this.broker.url,
          this.broker.username,
        );
        sub.error(new MqttInputError(f.message, f.fatal));
      });
      return () => {
        client.removeAllListeners('close');
        client.end(true);
      };
    });
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
