// The fleet's topics and payloads: what a robot publishes under <prefix>/<robot>/, and the commands it takes, as zod schemas both ends share.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/*
 * Topics (docs/fleet.md), all keyed by robot so a fleet shards by robot id:
 *   <prefix>/<robot>/status    retained, QoS 1   {status: online|offline, at, ...}; the last will is offline
 *   <prefix>/<robot>/state     retained, QoS 1   RobotState, republished on change and on every connect
 *   <prefix>/<robot>/events    QoS 0             one bus event an operator cares about per message
 *   <prefix>/<robot>/metrics   QoS 0             counters, every metrics_interval_seconds
 *   <prefix>/<robot>/commands  QoS 1, robot subscribes (persistent session): FleetCommand
 *   <prefix>/<robot>/replies   QoS 1             FleetReply, one per command, matched by id
 */

export const TOPICS = ['status', 'state', 'events', 'metrics', 'commands', 'replies'] as const;
export type TopicKind = (typeof TOPICS)[number];

export function topicOf(prefix: string, robot: string, kind: TopicKind): string {
  return `${prefix}/${robot}/${kind}`;
}

/** The robot id and kind of a topic under `prefix`, or undefined when it is not a fleet topic. */
export function parseTopic(prefix: string, topic: string): { robot: string; kind: TopicKind } | undefined {
  if (!topic.startsWith(`${prefix}/`)) return undefined;
  const rest = topic.slice(prefix.length + 1).split('/');
  if (rest.length !== 2) return undefined;
  const [robot, kind] = rest as [string, string];
  return (TOPICS as readonly string[]).includes(kind) ? { robot, kind: kind as TopicKind } : undefined;
}

/** Longest configuration text a `reload` may carry (the loader's own limit is 4 MiB; a pushed file is kept smaller). */
export const MAX_RELOAD_BYTES = 1024 * 1024;
/**
 * Largest command payload a robot reads: a `reload` of MAX_RELOAD_BYTES written as a JSON string
 * (escaped quotes and newlines) fits; anything larger is refused before it is parsed. The shipped
 * broker (systemd/mosquitto/cortexd.conf, `message_size_limit`) refuses such a publish at once.
 */
export const MAX_COMMAND_BYTES = 2 * 1024 * 1024;
/** The MQTT packet size a robot accepts (CONNECT's Maximum Packet Size): the payload, its topic and properties. */
export const MAX_PACKET_BYTES = MAX_COMMAND_BYTES + 64 * 1024;

const Envelope = {
  /** Unique per command (a UUID): a command seen before is refused as a replay. */
  id: z
    .string()
    .min(8)
    .max(128)
    .regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits, _ . : - only'),
  /** Milliseconds since the epoch after which the robot refuses the command as stale. */
  expires_at: z.number().int().positive(),
  /** Who sent it (for the robot's events and logs); free text. */
  from: z.string().max(128).optional(),
  /** The operator's Ed25519 signature (base64url) over the robot id and the rest of the command (src/fleet/identity.ts). */
  sig: z.string().max(200).optional(),
};

export const FleetCommand = z.discriminatedUnion('command', [
  z.object({ ...Envelope, command: z.literal('switch'), mode: z.string().min(1).max(200) }),
  z.object({ ...Envelope, command: z.literal('say'), text: z.string().min(1).max(2000) }),
  z.object({
    ...Envelope,
    command: z.literal('context'),
    values: z
      .record(z.string().min(1).max(200), z.union([z.string().max(2000), z.number(), z.boolean(), z.null()]))
      .refine((v) => Object.keys(v).length > 0 && Object.keys(v).length <= 50, '1 to 50 values'),
  }),
  z.object({ ...Envelope, command: z.literal('estop'), reason: z.string().max(500).optional() }),
  z.object({ ...Envelope, command: z.literal('release'), reason: z.string().max(500).optional() }),
  z.object({ ...Envelope, command: z.literal('reload'), config: z.string().min(1).max(MAX_RELOAD_BYTES) }),
]);
export type FleetCommand = z.infer<typeof FleetCommand>;
export type CommandName = FleetCommand['command'];
/** A command before it is sent: without its id and expiry (distributed over the union). */
export type CommandBody = FleetCommand extends infer C ? (C extends FleetCommand ? Omit<C, 'id' | 'expires_at'> : never) : never;
export const COMMAND_NAMES: readonly CommandName[] = ['switch', 'say', 'context', 'estop', 'release', 'reload'];

/** The answer to one command, on the robot's `replies` topic. `lines`: the check's problems of a refused reload. */
export const FleetReply = z.object({
  id: z.string(),
  robot: z.string(),
  command: z.string(),
  ok: z.boolean(),
  reason: z.string().optional(),
  lines: z.array(z.string()).optional(),
  at: z.number(),
});
export type FleetReply = z.infer<typeof FleetReply>;

export const Status = z.looseObject({
  status: z.enum(['online', 'offline']),
  robot: z.string(),
  at: z.number().optional(),
  reason: z.string().optional(),
  version: z.string().optional(),
});
export type Status = z.infer<typeof Status>;

/** Health of one part of the robot, from the bus: `ok` means nothing reported it broken since it started. */
export const Health = z.object({ state: z.string(), detail: z.string().optional(), since: z.number() });
export type Health = z.infer<typeof Health>;

export const RobotState = z.looseObject({
  robot: z.string(),
  config: z.string(),
  config_sha256: z.string().optional(),
  version: z.string(),
  mode: z.string(),
  mode_since: z.number(),
  modes: z.array(z.string()),
  health: z.object({
    ok: z.boolean(),
    inputs: z.record(z.string(), Health),
    actions: z.record(z.string(), Health),
    streams: z.record(z.string(), Health),
    tool_servers: z.record(z.string(), Health),
    /** The mode's model by its label: `ok`, `streaming_off` (answers whole; still healthy), `failing`. Absent from older robots. */
    models: z.record(z.string(), Health).optional(),
  }),
  battery: z.looseObject({ percent: z.number(), status: z.string().optional(), charging: z.boolean().optional(), low: z.boolean().optional() }).nullable(),
  position: z.looseObject({ lat: z.number(), lon: z.number(), altitude_m: z.number().optional() }).nullable(),
  estop: z.object({ available: z.boolean(), engaged: z.boolean().nullable() }),
  /** The command inbox: commands waiting, its capacity, and how many were refused (full, too large) since the channel started. */
  commands: z.object({ queued: z.number(), capacity: z.number(), refused_full: z.number(), refused_too_large: z.number() }).optional(),
  updated_at: z.number(),
});
export type RobotState = z.infer<typeof RobotState>;

/** A command ready to send: a fresh UUID and an expiry `ttlMs` from now. */
export function makeCommand(body: CommandBody, ttlMs: number, now = Date.now()): FleetCommand {
  return { ...body, id: randomUUID(), expires_at: now + ttlMs } as FleetCommand;
}

/** Parses a payload as JSON and checks it against `schema`; the error names the first problem and its field. */
export function parsePayload<S extends z.ZodType>(schema: S, payload: Buffer | string): { ok: true; value: z.output<S> } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(payload.toString());
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const r = schema.safeParse(json);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return { ok: false, reason: `${where}${issue.message}` };
}
