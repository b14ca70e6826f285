// SerialReader: lines from a serial port (reopened after an unplug) as "Serial: ..." prompt lines.
import { type Observable, map } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { SerialReaderSchema, serialConfigOf, serialFields, type SerialReaderConfig } from '../../src/plugins/schemas/inputs.js';
import { createSerialLine, type SerialLine } from '../../devices/serial.js';
import { BufferedInput } from './buffered-input.js';

export { SerialReaderSchema, serialConfigOf, serialFields, type SerialReaderConfig };

/**
 * Listening opens the port (reopened with backoff when it vanishes); each non-empty line is a
 * message (`final: false`: sensor chatter does not wake the loop). The buffer keeps the lines since
 * the last tick (at most `buffer_size`, oldest dropped and counted), one `Serial: ...` line each.
 */
export class SerialReader extends BufferedInput<string> {
  /** Failures the device recovers from itself (reopened after its backoff), for the bus. */
  get deviceFailures$() {
    return this.serial.failures$.pipe(map((e) => ({ message: e.message, ...(e.retryInMs !== undefined ? { retryInMs: e.retryInMs } : {}) })));
  }

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
