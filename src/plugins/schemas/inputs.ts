// The config blocks of the input plugins as zod schemas: data only, shared by the descriptors and the inputs in actors/inputs/.
import { z } from 'zod';
import { CameraConfigSchema, MicrophoneConfigSchema, type SerialConfig } from './devices.js';

/** Fields every buffered input accepts. */
export const CommonInputFields = {
  /** Label of this input in the prompt (`Voice: ...`). */
  descriptor: z.string().min(1).optional(),
  /** Most messages kept between two ticks; the oldest go first. */
  buffer_size: z.number().int().positive().max(1000).default(20),
  /**
   * Which new messages of this input call the model (src/cortex/wake.ts): `change` only a meaningful
   * change by the input's measure (any final transcript; vision: faces or motion level; battery: a
   * charge bucket or the status; GPS: the fix or a move; serial: any line), `always` every new message,
   * `never` none by itself (its text rides along when another input calls the model).
   */
  wake: z.enum(['change', 'always', 'never']).default('change'),
};

/** Which vision facts are a meaningful change (VLMInput, LocalVLMInput): the count of faces, the motion level (none, slight, strong). */
const VisionWakeFields = {
  wake_on: z.array(z.enum(['faces', 'motion'])).default(['faces', 'motion']),
};

// TextInput.

export const TextInputOptions = z
  .looseObject({
    /** Where lines come from: the process's stdin, a FIFO at `path`, or a unix socket served at `path`. */
    source: z.enum(['stdin', 'fifo', 'socket']).default('stdin'),
    path: z.string().min(1).optional(),
    /** Label of this input in the prompt. */
    descriptor: z.string().default('Typed text'),
    /** Most lines kept between two ticks; older ones are dropped (and counted) first. */
    buffer_size: z.number().int().positive().max(1000).default(20),
    /** Longest line kept, in characters; longer lines are cut. */
    max_line_length: z.number().int().positive().default(2000),
  })
  .superRefine((o, ctx) => {
    if (o.source !== 'stdin' && !o.path) ctx.addIssue({ code: 'custom', path: ['path'], message: `source ${o.source} needs a path` });
  });
export type TextInputOptions = z.infer<typeof TextInputOptions>;

// SpeechlabASRInput, SpeechbASRInput.

const AsrFields = {
  ...CommonInputFields,
  /** The microphone binding (`recorder` or `replay`); its `rate` is the rate sent to the socket. */
  microphone: MicrophoneConfigSchema.prefault({ binding: 'recorder' }),
  /** Audio per socket message, in ms. */
  chunk_ms: z.number().int().min(10).max(1000).default(100),
  /** Audio kept while the socket reconnects, in ms; older audio is dropped and counted. */
  ring_ms: z.number().int().nonnegative().default(10_000),
  /** Keep listening while the robot speaks; speech heard then stops playback (barge-in). */
  allow_interruption: z.boolean().optional(),
  /** The same as `allow_interruption` (the name older configurations use). */
  enable_tts_interrupt: z.boolean().optional(),
  connect_timeout_ms: z.number().int().positive().default(10_000),
  backoff_max_ms: z.number().int().positive().default(30_000),
  /**
   * Send the model request on a partial transcript, before the final (kept when the final says the
   * same, replaced otherwise: each replacement is one more model call). The prompt is prepared on
   * partials either way.
   */
  speculative: z.boolean().default(false),
  /**
   * Voice activity detection on the robot (the WebRTC detector): silence is not sent to the recogniser;
   * with `allow_interruption`, speech onset stops the robot's speech at once.
   */
  vad: z
    .looseObject({
      enabled: z.boolean().default(true),
      /** 0 (quiet room) .. 3 (noisy robot): how readily audio is called non-speech. */
      aggressiveness: z.number().int().min(0).max(3).default(2),
      /** Speech needed before it counts as speech, ms. */
      onset_ms: z.number().int().min(20).max(1000).default(60),
      /** Audio before the onset sent with it, so word onsets are not lost, ms. */
      pre_roll_ms: z.number().int().min(0).max(2000).default(300),
      /** Non-speech after the last speech that ends the utterance (shorter pauses do not split it), ms; chosen by bench/voice-turn.js. */
      hangover_ms: z.number().int().min(0).max(5000).default(150),
      /**
       * Silence sent at once at the end of an utterance so a recogniser that commits on silence (the hosted
       * sockets) commits it now, ms (0: none). The local service announces it takes an explicit end and
       * gets that instead (no padding).
       */
      commit_ms: z.number().int().min(0).max(3000).default(600),
    })
    .prefault({}),
};

export const SpeechlabASRInputSchema = z.looseObject({
  ...AsrFields,
  /** BCP-47 code or `auto` (automatic detection). */
  language: z.string().min(1).default('auto'),
  /** Use the `/api/core/v1/` path. */
  v1: z.boolean().default(false),
});
export const SpeechbASRInputSchema = z.looseObject({
  ...AsrFields,
  /** Region form, for example `en-US`. */
  language: z.string().min(1).default('en-US'),
});
export type AsrConfig = z.output<typeof SpeechlabASRInputSchema> | z.output<typeof SpeechbASRInputSchema>;

// VLMInput, LocalVLMInput.

export const VLMInputSchema = z.looseObject({
  ...CommonInputFields,
  /** The camera binding (`opencv`, `file` or `synthetic`). */
  camera: CameraConfigSchema.prefault({ binding: 'opencv' }),
  /** Frames sent per second at most (the hosted socket describes about one a second). */
  fps: z.number().positive().max(30).default(1),
  /** JPEG quality 0..100. */
  quality: z.number().int().min(0).max(100).default(70),
  ...VisionWakeFields,
  connect_timeout_ms: z.number().int().positive().default(10_000),
  backoff_max_ms: z.number().int().positive().default(30_000),
});
export type VLMInputConfig = z.output<typeof VLMInputSchema>;

export const LocalVLMInputSchema = z.looseObject({
  ...CommonInputFields,
  /** The camera binding (`opencv`, `file` or `synthetic`). */
  camera: CameraConfigSchema.prefault({ binding: 'opencv' }),
  /** Frames analysed per second at most. */
  fps: z.number().positive().max(30).default(1),
  ...VisionWakeFields,
});
export type LocalVLMInputConfig = z.output<typeof LocalVLMInputSchema>;

// SerialReader, GpsInput.

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

export const GpsInputSchema = z.looseObject({
  ...CommonInputFields,
  ...serialFields('/dev/ttyACM0'),
  /** A move of at least this many metres from the position the model last saw is a meaningful change. */
  wake_distance_m: z.number().positive().default(25),
});
export type GpsInputConfig = z.output<typeof GpsInputSchema>;

// BatteryInput.

/** The serial fields of BatteryInput's `serial` binding (serialFields' `binding` and `path` are taken by the sysfs fields). */
const { binding: serialBinding, path: _serialPath, ...batterySerialFields } = serialFields('/dev/ttyUSB0');

export const BatteryInputSchema = z
  .looseObject({
    ...CommonInputFields,
    /**
     * `sysfs` (default): Linux power_supply files under `path`. `serial`: a battery board on `serial_port`
     * writing one reading per line, JSON `{"percent":78,"charging":false}` or plain `BAT 78` / `BAT 78 CHG`
     * (CHG: charging); other lines are counted and logged once.
     */
    binding: z.enum(['sysfs', 'serial']).default('sysfs'),
    /** The power_supply class directory (tests point it at a fake tree). sysfs binding. */
    path: z.string().min(1).default('/sys/class/power_supply'),
    /** Supply name under `path`, e.g. `BAT0`; default the first whose `type` is `Battery`. sysfs binding. */
    device: z.string().min(1).optional(),
    /** Seconds between two reads. sysfs binding (a serial board sends when it wants). */
    poll_seconds: z.number().positive().default(10),
    /** The charge in buckets of this many percent: crossing into another bucket is a meaningful change. */
    wake_percent_step: z.number().positive().max(100).default(10),
    /** At or below this charge, while not charging, the battery is reported low (and the message wakes the loop). */
    low_percent: z.number().min(0).max(100).default(20),
    /** The battery board's port, e.g. `/dev/ttyUSB1` or a pty made by socat. serial binding (required there). */
    ...batterySerialFields,
    /** `serialport` (real port) or `mock` (serialport's mock binding, for tests and simulators). serial binding. */
    serial_binding: serialBinding,
  })
  .refine((c) => c.binding !== 'serial' || c.serial_port !== undefined, {
    message: 'binding "serial" needs serial_port (the battery board\'s port, e.g. /dev/ttyUSB1)',
    path: ['serial_port'],
  });
export type BatteryInputConfig = z.output<typeof BatteryInputSchema>;
