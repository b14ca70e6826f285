// ROS 2 message types by name (any type of ros2 Humble/Jazzy's common packages, plus Unitree's): their definitions, DDS type names and CDR codecs.
import type { MessageDefinition } from '@foxglove/message-definition';
import { parse } from '@foxglove/rosmsg';
import { ros2jazzy } from '@foxglove/rosmsg-msgs-common';
import { MessageReader, MessageWriter } from '@foxglove/rosmsg2-serialization';
import { DdsError } from './addon.js';
import { UNITREE_MSGS } from './unitree/msgs.js';

/** One message type ready for the wire. */
export interface RosCodec {
  /** `pkg/msg/Name` as ROS 2 writes it. */
  rosType: string;
  /** `pkg::msg::dds_::Name_`: the DDS type name ROS 2 (rmw_cyclonedds) and Unitree use. */
  ddsType: string;
  definitions: MessageDefinition[];
  /** The definition as ros2msg text (root first, dependencies after `MSG:` lines): the MCAP schema. */
  schemaText: string;
  decode(cdr: Uint8Array): Record<string, unknown>;
  /** Serialises a message (missing fields take their defaults), encapsulation header first. */
  encode(message: Record<string, unknown>): Uint8Array;
}

/** `geometry_msgs/msg/Twist` or `geometry_msgs/Twist` -> `geometry_msgs/Twist` (the key of the definition tables). */
export function shortType(rosType: string): string {
  const parts = rosType.trim().split('/');
  if (parts.length === 3 && parts[1] === 'msg') return `${parts[0]}/${parts[2]}`;
  return rosType.trim();
}

/** `geometry_msgs/Twist` -> `geometry_msgs::msg::dds_::Twist_`; a Unitree name already ends with `_`. */
export function ddsTypeName(rosType: string): string {
  const [pkg, name] = shortType(rosType).split('/');
  if (!pkg || !name) throw new DdsError('dds_type', `"${rosType}" is not a ROS 2 message type (write it as package/msg/Name, e.g. geometry_msgs/msg/Twist)`);
  return `${pkg}::msg::dds_::${name.endsWith('_') ? name : `${name}_`}`;
}

const extra = new Map<string, MessageDefinition[]>();
for (const [name, text] of Object.entries(UNITREE_MSGS)) {
  const defs = parse(text, { ros2: true });
  defs[0] = { ...defs[0]!, name };
  extra.set(name, defs);
}

const common = ros2jazzy as Record<string, MessageDefinition>;

/**
 * The service halves this runtime calls, as rmw_cyclonedds puts them on the wire: its request header
 * (`cdds_request_header_t`: the client's guid as uint64, the sequence number as int64) first, then the
 * request or response of the .srv (action_msgs/srv/CancelGoal.srv). Keys are `pkg/srv/Name_Request`.
 */
const RMW_REQUEST_HEADER = 'uint64 client_guid\nint64 sequence_number\n';
const SERVICES: Record<string, string> = {
  'action_msgs/srv/CancelGoal_Request': `${RMW_REQUEST_HEADER}action_msgs/GoalInfo goal_info\n`,
  'action_msgs/srv/CancelGoal_Response': `${RMW_REQUEST_HEADER}int8 return_code\naction_msgs/GoalInfo[] goals_canceling\n`,
};

/** Every known message type, for error messages and `schema`. */
export function knownTypes(): string[] {
  return [...Object.keys(common), ...extra.keys()].sort();
}

/** The definitions of `rosType`: the root first, then every complex type it uses. */
function definitionsOf(rosType: string): MessageDefinition[] {
  const key = shortType(rosType);
  const own = extra.get(key);
  if (own) return own;
  const service = SERVICES[rosType.trim()];
  const root = service ? { name: rosType.trim(), definitions: parse(service, { ros2: true, skipTypeFixup: true })[0]!.definitions } : common[key];
  if (!root) {
    const near = knownTypes().filter((t) => t.endsWith(`/${key.split('/').pop()}`));
    throw new DdsError(
      'dds_type',
      `unknown ROS 2 message type "${rosType}"${near.length ? ` (did you mean ${near.slice(0, 3).join(', ')}?)` : ''}: the known types are ROS 2 Jazzy's common_interfaces and Unitree's unitree_go/unitree_api`,
    );
  }
  const out: MessageDefinition[] = [{ ...root, name: service ? rosType.trim() : key }];
  const seen = new Set([out[0]!.name!]);
  for (let i = 0; i < out.length; i++) {
    for (const f of out[i]!.definitions) {
      if (!f.isComplex || seen.has(f.type)) continue;
      const dep = common[f.type];
      if (!dep) throw new DdsError('dds_type', `${key} uses ${f.type}, which has no definition here`);
      seen.add(f.type);
      out.push(dep);
    }
  }
  return out;
}

function fieldLine(f: MessageDefinition['definitions'][number]): string {
  const array = f.isArray ? `[${f.arrayLength ?? ''}]` : '';
  const type = f.type === 'time' ? 'builtin_interfaces/Time' : f.type === 'duration' ? 'builtin_interfaces/Duration' : f.type;
  if (f.isConstant) return `${type} ${f.name}=${String(f.valueText ?? f.value)}`;
  return `${type}${array} ${f.name}`;
}

/** ros2msg text of a definition set (the MCAP `ros2msg` schema encoding). */
function schemaTextOf(defs: MessageDefinition[]): string {
  const body = (d: MessageDefinition) => d.definitions.map(fieldLine).join('\n');
  const parts = [body(defs[0]!)];
  for (const d of defs.slice(1)) parts.push(`${'='.repeat(80)}\nMSG: ${d.name}\n${body(d)}`);
  return `${parts.join('\n')}\n`;
}

const codecs = new Map<string, RosCodec>();

/** The codec of `rosType` (cached); throws DdsError('dds_type') naming the type when it is unknown. */
export function codecOf(rosType: string): RosCodec {
  const key = shortType(rosType);
  const hit = codecs.get(key);
  if (hit) return hit;
  const definitions = definitionsOf(rosType);
  const reader = new MessageReader(definitions);
  const writer = new MessageWriter(definitions);
  const [pkg, name] = key.split('/');
  const srv = SERVICES[rosType.trim()] ? /^(\w+)\/srv\/(\w+)$/.exec(rosType.trim()) : null;
  const codec: RosCodec = {
    rosType: srv ? rosType.trim() : `${pkg}/msg/${name}`,
    // a service half: `action_msgs::srv::dds_::CancelGoal_Request_`, as rmw_cyclonedds names it
    ddsType: srv ? `${srv[1]}::srv::dds_::${srv[2]}_` : ddsTypeName(key),
    definitions,
    schemaText: schemaTextOf(definitions),
    decode: (cdr) => reader.readMessage(cdr),
    encode: (message) => writer.writeMessage(message),
  };
  codecs.set(key, codec);
  return codec;
}
