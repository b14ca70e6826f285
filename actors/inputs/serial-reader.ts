// SerialReader: lines from a serial port (reopened after an unplug) as "Serial: ..." prompt lines; also the serial fields GpsInput shares.
import { Observable } from 'rxjs';
import { z } from 'zod';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import type { PluginSpec } from '../../src/plugin-registry.js';
import { createSerialLine, type SerialConfig, type SerialLine } from '../../devices/serial.js';
import { BufferedInput, CommonInputFields } from './buffered-input.js';

/** The serial port fields of SerialReader and GpsInput (the device binding's, flattened into the input's config). */
export const serialFields = (defaultPath: string) => ({
  /** `serialport` (real port) or `mock` (serialport's mock binding, for tests and simulators). */
  binding: z.enum(['serialport', 'mock']).default('serialport'),
  /** Device path, e.g. `/dev/ttyUSB0` or a pty made by socat. */
  path: z.string().min(1).default(defaultPath),
  /** The same as `path` (the name older configurations use); wins when both are set. */
  serial_port: z.string().min(1).optional(),
  baud_rate: z.number().int().positive().default(9600),
  delimiter: z.string().min(1).default('\n'),
  reopen_initial_ms: z.number().int().positive().default(500),
  reopen_max_ms: z.number().int().positive().default(5000),
});

type SerialFields = z.output<z.ZodObject<ReturnType<typeof serialFields>>>;

/** The device config the serial fields describe. */
export function serialConfigOf(c: SerialFields): SerialConfig {
  return {
    binding: c.binding,
    path: c.serial_port ?? c.path,
    baud_rate: c.baud_rate,
    delimiter: c.delimiter,
    reopen_initial_ms: c.reopen_initial_ms,
    reopen_max_ms: c.reopen_max_ms,
  };
}

export const SerialReaderSchema = z.looseObject({
  ...CommonInputFields,
  ...serialFields('/dev/ttyUSB0'),
  /** Longest line kept, in characters; longer lines are cut. */
  max_line_length: z.number().int().positive().default(500),
});
export type SerialReaderConfig = z.output<typeof SerialReaderSchema>;

/**
 * Listening opens the port (reopened with backoff when it vanishes); each non-empty line is a
 * message (`final: false`: sensor chatter does not wake the loop). The buffer keeps the lines since
 * the last tick (at most `buffer_size`, oldest dropped and counted), one `Serial: ...` line each.
 */
export class SerialReader extends BufferedInput<string> {
  constructor(
    private readonly config: SerialReaderConfig,
    private readonly serial: SerialLine,
    ctx?: Pick<InputContext, 'logger' | 'signal'>,
  ) {
    super({
      type: 'SerialReader',
      descriptor: config.descriptor ?? 'Serial',
      bufferSize: config.buffer_size,
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

const create: InputFactory = (raw, ctx) => {
  const config = SerialReaderSchema.parse(raw ?? {});
  return new SerialReader(config, createSerialLine(serialConfigOf(config), { logger: ctx.logger }), ctx);
};

export const serialReaderSpec: PluginSpec<InputFactory> = {
  type: 'SerialReader',
  description: 'lines from a serial port (reopened after an unplug) as "Serial:" lines',
  schema: SerialReaderSchema,
  create,
};
