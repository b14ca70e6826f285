// Ros2TopicInput: a configured ROS 2 topic and type over DDS as prompt lines, by a template or compactly, rate-limited and bounded.
import { type Observable, asyncScheduler, defer, finalize, map, throttleTime, type SchedulerLike } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { Ros2TopicInputSchema, type Ros2TopicInputConfig } from '../../src/plugins/schemas/ros2.js';
import { DdsParticipant } from '../../devices/dds/participant.js';
import { ddsTopic } from '../../devices/dds/ros2/base.js';
import { messageText } from '../../devices/dds/message-text.js';
import { codecOf, type RosCodec } from '../../devices/dds/types.js';
import { BufferedInput } from './buffered-input.js';

interface Received {
  message: Record<string, unknown>;
  at: number;
}

/**
 * Subscribes to the topic while the input listens (a best-effort reader by default: it matches every
 * publisher). The newest message per `min_interval_seconds` reaches the prompt (throttled, leading and
 * trailing: the first at once, the last of a burst after it), each as one line of at most `max_chars`.
 * A sample that does not decode as the type is dropped by the participant. With no publisher matched
 * the prompt says once that the input is not available (`no publisher of /battery_state ...`), and
 * nothing more until one comes.
 */
export class Ros2TopicInput extends BufferedInput<Received> {
  private readonly render: (message: Record<string, unknown>) => string;
  private readonly dds: string;

  constructor(
    private readonly config: Ros2TopicInputConfig,
    private readonly codec: RosCodec,
    private readonly ctx?: Pick<InputContext, 'logger' | 'signal' | 'media'>,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    super({
      type: 'Ros2TopicInput',
      descriptor: config.descriptor ?? config.topic,
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'latest',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
    this.dds = ddsTopic(config.topic);
    this.render = messageText(codec, { fields: config.fields, template: config.template, topic: config.topic, maxChars: config.max_chars });
  }

  protected source(): Observable<Received> {
    return defer(() => {
      const participant = DdsParticipant.open({ domain: this.config.domain_id, networkInterface: this.config.network_interface });
      const untap = this.ctx?.media?.dds ? participant.tap(this.ctx.media) : undefined;
      const reader = participant.reader(this.dds, this.codec.rosType, { reliable: this.config.reliable, depth: 1 });
      const where = `${this.config.topic} (${this.codec.rosType}) on DDS domain ${participant.domain}`;
      let matched = false;
      this.unavailable(`no publisher of ${where} yet`);
      const health = reader.matched$.subscribe((n) => {
        if (n > 0) {
          matched = true;
          this.available();
        } else if (matched) this.unavailable(`the publisher of ${where} went away`);
      });
      const ms = this.config.min_interval_seconds * 1000;
      const messages = reader.messages$.pipe(map((message) => ({ message, at: Date.now() })));
      return (ms > 0 ? messages.pipe(throttleTime(ms, this.scheduler, { leading: true, trailing: true })) : messages).pipe(
        finalize(() => {
          health.unsubscribe();
          reader.close();
          untap?.();
          participant.close();
        }),
      );
    });
  }

  protected toMessage(raw: Received): InputMessage | undefined {
    let text: string;
    try {
      text = this.render(raw.message).trim();
    } catch (err) {
      // A message that decoded but does not render (a value of an unexpected shape) is one lost line, never a stopped input.
      this.logger?.warn({ topic: this.config.topic, err }, `${this.config.topic}: a message could not be rendered`);
      return undefined;
    }
    return text ? { timestamp: raw.at, text, final: false } : undefined;
  }

  /** Only a different text is news (a sensor repeating the same values does not call the model each time). */
  protected override changed(previous: string, next: string): boolean {
    return previous !== next;
  }
}

/** The Ros2TopicInput plugin (its descriptor is in src/plugins/ros2.ts). An unknown type or a field path the type lacks fails here, naming it. */
export const createRos2TopicInput: InputFactory = (raw, ctx) => {
  const config = Ros2TopicInputSchema.parse(raw ?? {});
  return new Ros2TopicInput(config, codecOf(config.message_type), ctx);
};
