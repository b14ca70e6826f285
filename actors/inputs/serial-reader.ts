// SerialReader: lines from a serial port (held open by its session child `device:serial`) as "Serial: ..." prompt lines.
import type { Observable } from 'rxjs';
import type { InputContext, InputFactory, InputMessage, InputPlugin } from '../../src/cortex/input.js';
import { SerialReaderSchema, serialConfigOf, serialFields, type SerialReaderConfig } from '../../src/plugins/schemas/inputs.js';
import { createSerialLine, type SerialLine } from '../../devices/serial.js';
import { BufferedInput } from './buffered-input.js';
import { serialSessionInput } from '../streams/serial-session.js';

export { SerialReaderSchema, serialConfigOf, serialFields, type SerialReaderConfig };

/**
 * The port is the input's device: the input actor runs its session (child `device:serial`, stream
 * kind `serial`), which opens it and reopens it with the engine's backoff when it vanishes. Listening
 * reads the port's lines; each non-empty line is a message (`final: false`: sensor chatter does not
 * wake the loop). The buffer keeps the lines since the last tick (at most `buffer_size`, oldest
 * dropped and counted), one `Serial: ...` line each.
 */
export class SerialReader extends BufferedInput<string> {
  readonly device: NonNullable<InputPlugin['device']>;

  constructor(
    private readonly config: SerialReaderConfig,
    private readonly serial: SerialLine,
    ctx?: Pick<InputContext, 'logger' | 'signal'>,
  ) {
    super({
      type: 'SerialReader',
      descriptor: config.descriptor ?? 'Serial',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'all',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
    // Nothing about a port is fatal (its session never fails): its states are on the bus, its lines in `source()`.
    this.device = { name: 'serial', kind: 'serial', input: serialSessionInput(serial), onEvent: () => undefined };
  }

  protected source(): Observable<string> {
    return this.serial.lines();
  }

  protected toMessage(raw: string): InputMessage | undefined {
    const text = raw.trim().slice(0, this.config.max_line_length);
    return text ? { timestamp: Date.now(), text, final: false } : undefined;
  }

  /** The port, for writes by an action sharing it. */
  get line(): SerialLine {
    return this.serial;
  }
}

/** The SerialReader plugin (its descriptor is in src/plugins/inputs.ts). */
export const createSerialReader: InputFactory = (raw, ctx) => {
  const config = SerialReaderSchema.parse(raw ?? {});
  return new SerialReader(config, createSerialLine(serialConfigOf(config), { logger: ctx.logger }), ctx);
};
