// The `ros2_topic` connector of ros2_publish: one message of the configured type on the configured topic per command, from validated arguments and `fixed`.
import type { BehaviorSubject } from 'rxjs';
import { CortexError, describeError } from '../../../src/errors.js';
import type { ActionConnector, ActionContext } from '../../../src/cortex/action.js';
import { Ros2TopicConnectorOptions } from '../../../src/plugins/schemas/ros2.js';
import { DdsParticipant } from '../../../devices/dds/participant.js';
import { ddsTopic } from '../../../devices/dds/ros2/base.js';
import { checkArgField, checkFixedField, fits, setPath } from '../../../devices/dds/message-fields.js';
import { codecOf } from '../../../devices/dds/types.js';
import { whenMatched } from '../../../devices/dds/matched.js';

/** How long a command waits for a subscriber to be matched before it fails (discovery takes a moment after start). */
export const MATCH_WAIT_MS = 3000;

/** A command that could not be published (no subscriber, a value the field cannot hold, CycloneDDS refused the write). */
export class Ros2PublishError extends CortexError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ros2_publish', message, options);
    this.name = 'Ros2PublishError';
  }
}

/** The config block's message, its `fixed` paths set, as a tree (copied for each command). */
function fixedTree(fixed: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(fixed)) setPath(out, path.split('.'), value);
  return out;
}

/**
 * The connector. When it is made, every argument is checked against its field of the type (a primitive
 * of a kind that takes it, integers within the type's range), every `fixed` path and value too, and a
 * message of the fixed values is serialised once: a configuration the type does not fit fails at start,
 * naming the argument or path. A command waits (at most MATCH_WAIT_MS) for a subscriber, then writes
 * one message; with none it fails with why, so the model is never told "done" for a message nobody got.
 * Not a motion connector: the schema refuses the types that move a robot.
 */
export function createRos2TopicConnector(raw: unknown, ctx: ActionContext): ActionConnector {
  const o = Ros2TopicConnectorOptions.parse(raw ?? {});
  const codec = codecOf(o.message_type);
  const setters = Object.entries(o.args).map(([name, spec]) => {
    const found = checkArgField(codec, name, spec.field ?? name, spec);
    return { name, path: found.path, type: found.field.type };
  });
  for (const [path, value] of Object.entries(o.fixed)) checkFixedField(codec, path, value);
  const base = fixedTree(o.fixed);
  try {
    codec.encode(base);
  } catch (err) {
    throw new Ros2PublishError(`fixed values do not make a ${codec.rosType}: ${describeError(err)}`, { cause: err });
  }
  const topic = ddsTopic(o.topic);
  const participant = DdsParticipant.open({ domain: o.domain_id, networkInterface: o.network_interface });
  const untap = ctx.media?.dds ? participant.tap(ctx.media) : undefined;
  let writer: ReturnType<DdsParticipant['writer']>;
  try {
    writer = participant.writer(topic, codec.rosType, { reliable: o.reliable, depth: 1 });
  } catch (err) {
    untap?.();
    participant.close();
    throw err;
  }
  const where = `${o.topic} (${codec.rosType}) on DDS domain ${participant.domain}`;
  let stopped = false;

  /** Resolves once a subscriber is matched; rejects after MATCH_WAIT_MS, or when `signal` aborts. */
  const subscriber = async (matched$: BehaviorSubject<number>, signal: AbortSignal): Promise<void> => {
    if (!(await whenMatched(matched$, MATCH_WAIT_MS, signal)))
      throw new Ros2PublishError(`no subscriber of ${where} within ${MATCH_WAIT_MS / 1000} s; nothing was published`);
  };

  return {
    name: 'ros2_topic',
    async run(value, signal) {
      signal.throwIfAborted();
      if (stopped) throw new Ros2PublishError(`the ros2_topic connector of ${where} is stopped`);
      const args = (value ?? {}) as Record<string, unknown>;
      const message = structuredClone(base);
      for (const s of setters) {
        const v = args[s.name];
        if (v === undefined) continue;
        if (typeof v === 'number' && !fits(s.type, v)) throw new Ros2PublishError(`${s.name} ${v} does not fit ${s.path.join('.')}, a ${s.type}`);
        setPath(message, s.path, v);
      }
      await subscriber(writer.matched$, signal);
      try {
        writer.publish(message);
      } catch (err) {
        throw new Ros2PublishError(`publishing on ${where} failed: ${describeError(err)}`, { cause: err });
      }
      ctx.logger.debug({ topic: o.topic, type: codec.rosType }, `published on ${o.topic}`);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      writer.close();
      untap?.();
      participant.close();
    },
  };
}
