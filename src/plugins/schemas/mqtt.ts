// The config blocks of the MQTT middleware (MqttInput, the `mqtt` connector of move, face and speak) as zod schemas: data only.
import { z } from 'zod';
import { CommonInputFields } from './inputs.js';
import { BrokerFields, parseBrokerUrl, topicProblem } from './broker.js';

/** The broker fields with `url` required and checked (credentials in it are accepted, never shown). */
const broker = {
  ...BrokerFields,
  url: z
    .string()
    .min(1)
    .superRefine((url, ctx) => {
      const r = parseBrokerUrl(url);
      if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message });
    })
    .describe('broker URL: mqtt://host:1883, mqtts://host:8883 (TLS), ws:// or wss://; e.g. "${CORTEX_MQTT_URL}"'),
};

const topicFilter = z.string().superRefine((t, ctx) => {
  const p = topicProblem(t, true);
  if (p) ctx.addIssue({ code: 'custom', message: p });
});

const topicName = z.string().superRefine((t, ctx) => {
  const p = topicProblem(t, false);
  if (p) ctx.addIssue({ code: 'custom', message: p });
});

export const MqttInputSchema = z.looseObject({
  ...CommonInputFields,
  ...broker,
  /** Topic filters to subscribe to (`+` and `#` allowed), e.g. `sensors/+/temperature`. */
  topics: z.array(topicFilter).min(1, 'name at least one topic'),
  qos: z.union([z.literal(0), z.literal(1)]).default(0),
  /**
   * How a message becomes prompt text: `{topic}`, `{payload}` (the text, JSON compacted) and
   * `{payload.a.b}` (a field of a JSON payload; empty when absent).
   */
  template: z.string().min(1).max(2000).default('{topic}: {payload}'),
  /** Messages wake the loop at once, like a typed line (default: they wait for the next tick). */
  final: z.boolean().default(false),
  /** Longest payload read, in bytes; longer ones are cut (and marked). */
  max_payload_bytes: z.number().int().positive().max(1_048_576).default(4096),
});
export type MqttInputConfig = z.output<typeof MqttInputSchema>;

export const MqttConnectorOptions = z.looseObject({
  ...broker,
  /** Where each command goes as JSON: `{"action": "move", "value": {...}, "id": "...", "at": ms}`. */
  topic: topicName,
  /** QoS 1: a command is done when the broker acknowledged it; QoS 0: when it was written. */
  qos: z.union([z.literal(0), z.literal(1)]).default(1),
  retain: z.boolean().default(false),
  /** Seconds to wait for the broker's acknowledgement (and for a connection) before the command fails. */
  ack_timeout_seconds: z.number().positive().max(60).default(5),
  /** Publish `{"action": ..., "stop": true}` to the topic when a running command is interrupted (default: move only). */
  send_stop: z.boolean().optional(),
});
export type MqttConnectorOptions = z.output<typeof MqttConnectorOptions>;
