// The shared half of every device/socket input plugin: one shared raw stream, poll, a bounded message buffer, formatting and stop.
import { type Observable, Subject, defer, filter, firstValueFrom, share, takeUntil } from 'rxjs';
import type { Logger } from 'pino';
import type { InputMessage, InputPlugin } from '../../src/cortex/input.js';
import { CortexError } from '../../src/errors.js';
import { wakes, type WakeMode } from '../../src/cortex/wake.js';

export { CommonInputFields } from '../../src/plugins/schemas/inputs.js';

/** How the buffer answers `formattedLatestBuffer`: every message since the last call, or only the newest. */
export type BufferPolicy = 'all' | 'latest';

/** An input could not be built: a required service is missing from the runtime (for example the cloud client). */
export class InputSetupError extends CortexError {
  constructor(type: string, message: string) {
    super('input_setup', `${type}: ${message}`);
    this.name = 'InputSetupError';
  }
}

export interface BufferedInputOptions {
  type: string;
  descriptor: string;
  bufferSize: number;
  policy: BufferPolicy;
  logger?: Logger;
  /** Aborted when the owning mode exits: stops the input. */
  signal?: AbortSignal;
  /** Which messages enter the buffer (default: all). ASR keeps finals only. */
  keep?: (message: InputMessage) => boolean;
  /** Which new messages call the model (the config's `wake`; default `change`). */
  wake?: WakeMode;
}

/**
 * Subclasses give the cold raw source and `toMessage`. Listening: the first subscriber starts the
 * source (device or socket), the last unsubscribe or `stop()` releases it; every subscriber sees the
 * same events. `rawToText` converts a raw event once and buffers the message (bounded, oldest
 * dropped and counted) until `formattedLatestBuffer()` takes it, as the spec's RawToText does: the
 * input actor calls it once per raw event.
 *
 * Health: an input whose source is down (`unavailable(reason)`) says so once in its formatted buffer
 * (`Voice: not available (reconnecting)`), so the model can tell a deaf robot from a quiet room; it
 * says nothing more until it is back (`available()`).
 */
export abstract class BufferedInput<Raw> implements InputPlugin<Raw> {
  readonly type: string;
  readonly descriptor: string;
  /** Messages dropped because the buffer was full between two ticks. */
  dropped = 0;
  protected readonly logger: Logger | undefined;
  private readonly options: BufferedInputOptions;
  private readonly stop$ = new Subject<void>();
  private raw$: Observable<Raw> | undefined;
  private buffer: InputMessage[] = [];
  private stopped = false;
  /** Polls waiting for the next raw event (answered by `heard`, or by the source through `listen()`). */
  private readonly polls = new Set<(raw: Raw | undefined) => void>();
  /** Why the source is down, and whether the prompt was told already. */
  private down: { reason: string; told: boolean } | undefined;

  constructor(options: BufferedInputOptions) {
    this.options = options;
    this.type = options.type;
    this.descriptor = options.descriptor;
    this.logger = options.logger;
    options.signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** The cold raw stream: subscribing opens the device or socket, unsubscribing releases it. */
  protected abstract source(): Observable<Raw>;

  /** Converts one raw event to a message (undefined when it carries no text); no side effects. */
  protected abstract toMessage(raw: Raw): InputMessage | undefined;

  /** RawToText: converts one raw event and buffers the message for the prompt. */
  rawToText(raw: Raw): InputMessage | undefined {
    const message = this.toMessage(raw);
    if (message) this.remember(message);
    return message;
  }

  /** The source is down for `reason`: the next formatted buffer says so once. */
  protected unavailable(reason: string): void {
    if (this.down?.reason !== reason) this.down = { reason, told: false };
  }

  /** The source is back. */
  protected available(): void {
    this.down = undefined;
  }

  /** Formats the buffered messages (oldest first); default: one `Descriptor: text` line per message. */
  protected format(messages: InputMessage[]): string {
    return messages.map((m) => `${this.descriptor}: ${m.text}`).join('\n');
  }

  /**
   * The meaningful-change policy (the config's `wake` around `changed`): `change` asks `changed`,
   * `always` says yes, `never` no. The model's first look at this input is always news under `change`.
   */
  meaningfulChange(previous: string | undefined, next: string): boolean {
    return wakes(this.options.wake ?? 'change', previous, next, (a, b) => this.changed(a, b));
  }

  /** This input's measure of a meaningful change between two formatted buffers; default: any new text is news. */
  protected changed(_previous: string, _next: string): boolean {
    return true;
  }

  /** Called by `stop()` after the raw stream is released (close what `source()` does not own). */
  protected async release(): Promise<void> {}

  listen(): Observable<Raw> {
    this.raw$ ??= defer(() => this.source()).pipe(takeUntil(this.stop$), share());
    return this.raw$;
  }

  async poll(signal?: AbortSignal): Promise<Raw | undefined> {
    if (this.stopped || signal?.aborted) return undefined;
    let answer: ((raw: Raw | undefined) => void) | undefined;
    // The next raw event of the source, or one its session actor brought (`heard`), whichever comes first.
    const heard = new Promise<Raw | undefined>((resolve) => {
      answer = resolve;
      this.polls.add(resolve);
    });
    const next = firstValueFrom(this.listen(), { defaultValue: undefined });
    const waits = [next, heard];
    if (signal) waits.push(new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true })));
    try {
      return await Promise.race(waits);
    } finally {
      this.polls.delete(answer!);
    }
  }

  /** A raw event that reached the input actor from the input's session actor, not from `listen()`: it answers waiting polls too. */
  protected heard(raw: Raw): Raw {
    for (const answer of this.polls) answer(raw);
    this.polls.clear();
    return raw;
  }

  /** Adds a message as if the source had produced it (the runtime's text box, tests). */
  protected remember(message: InputMessage): void {
    if (this.options.keep && !this.options.keep(message)) return;
    if (this.options.policy === 'latest') {
      this.buffer = [message];
      return;
    }
    this.buffer.push(message);
    while (this.buffer.length > this.options.bufferSize) {
      this.buffer.shift();
      this.dropped += 1;
    }
  }

  formattedLatestBuffer(): string | undefined {
    const health = this.down && !this.down.told ? `${this.descriptor}: not available (${this.down.reason})` : undefined;
    if (this.down) this.down.told = true;
    if (this.buffer.length === 0) return health;
    const messages = this.buffer;
    this.buffer = [];
    const text = this.format(messages);
    return health ? `${health}\n${text}` : text;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stop$.next();
    this.stop$.complete();
    for (const answer of this.polls) answer(undefined);
    this.polls.clear();
    await this.release();
  }

  protected get isStopped(): boolean {
    return this.stopped;
  }
}

/** Keeps only values that carry something (helper for sources that map to optional values). */
export const defined = <T>() => filter((v: T | undefined): v is T => v !== undefined);
