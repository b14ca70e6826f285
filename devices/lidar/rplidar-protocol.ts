// Slamtec RPLidar's serial protocol (A1/A2/A3/C1/S standard scan): request packets, response descriptors, info, health and 5-byte scan nodes.

/*
 * From Slamtec's public "RPLIDAR Interface Protocol and Application Notes" (LR001), standard scan
 * mode. A request is 0xA5, the command, and for commands with a payload its size, the payload and
 * an XOR checksum. A response starts with the descriptor 0xA5 0x5A, a 30-bit length and 2-bit send
 * mode (little-endian, mode in the top bits: 0 single, 1 multiple) and a data type. SCAN answers
 * with an endless run of 5-byte nodes:
 *   byte 0: quality (6 bits) << 2 | !S << 1 | S      S: first node of a new revolution
 *   byte 1: angle_q6 bits 0..6 << 1 | C              C: check bit, always 1
 *   byte 2: angle_q6 bits 7..14                       angle = angle_q6 / 64 degrees, clockwise
 *   bytes 3-4: distance_q2, little-endian            distance = distance_q2 / 4 mm; 0 = no return
 */

export const SYNC = 0xa5;
export const SYNC2 = 0x5a;

export const CMD = {
  STOP: 0x25,
  RESET: 0x40,
  SCAN: 0x20,
  FORCE_SCAN: 0x21,
  GET_INFO: 0x50,
  GET_HEALTH: 0x52,
  GET_SAMPLERATE: 0x59,
  /** A2M12/A3: motor PWM, payload uint16 (0..1023). */
  SET_MOTOR_PWM: 0xf0,
  /** C1/S series: motor speed, payload uint16 rpm (0 stops). */
  MOTOR_SPEED_CTRL: 0xa8,
} as const;

export const TYPE = { INFO: 0x04, HEALTH: 0x06, SCAN: 0x81 } as const;

/** A request packet; with `payload`, its size byte and XOR checksum. */
export function request(cmd: number, payload?: Buffer): Buffer {
  if (!payload) return Buffer.from([SYNC, cmd]);
  const out = Buffer.alloc(4 + payload.length);
  out[0] = SYNC;
  out[1] = cmd;
  out[2] = payload.length;
  payload.copy(out, 3);
  let sum = 0;
  for (let i = 0; i < 3 + payload.length; i++) sum ^= out[i]!;
  out[3 + payload.length] = sum;
  return out;
}

/** A uint16 payload (PWM, rpm). */
export function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(Math.max(0, Math.min(0xffff, Math.round(n))));
  return b;
}

export interface DeviceInfo {
  model: number;
  firmware: string;
  hardware: number;
  serial: string;
}

export function parseInfo(data: Buffer): DeviceInfo {
  return {
    model: data[0]!,
    firmware: `${data[2]}.${String(data[1]).padStart(2, '0')}`,
    hardware: data[3]!,
    serial: data.subarray(4, 20).toString('hex').toUpperCase(),
  };
}

export type HealthStatus = 'good' | 'warning' | 'error';
export interface Health {
  status: HealthStatus;
  code: number;
}

export function parseHealth(data: Buffer): Health {
  const s = data[0]!;
  return { status: s === 0 ? 'good' : s === 1 ? 'warning' : 'error', code: data.readUInt16LE(1) };
}

/** One measurement node, decoded. */
export interface ScanNode {
  start: boolean;
  quality: number;
  /** Degrees, clockwise from the sensor's zero, 0..360. */
  angle: number;
  /** Millimetres; 0: no return. */
  distanceMm: number;
}

/** Whether five bytes at `o` are a well-formed node (start bits inverse of each other, check bit set). */
export function nodeValid(b: Buffer, o: number): boolean {
  const s = b[o]! & 1;
  const ns = (b[o]! >> 1) & 1;
  return s !== ns && (b[o + 1]! & 1) === 1;
}

export function parseNode(b: Buffer, o: number): ScanNode {
  return {
    start: (b[o]! & 1) === 1,
    quality: b[o]! >> 2,
    angle: ((b[o + 1]! >> 1) | (b[o + 2]! << 7)) / 64,
    distanceMm: b.readUInt16LE(o + 3) / 4,
  };
}

export type DecoderEvent = { kind: 'response'; type: number; data: Buffer } | { kind: 'scan-start' };

/**
 * Decodes the bytes the sensor sends, in any chunking. Outside a scan it looks for a descriptor and
 * hands over each single response; after a SCAN descriptor (multiple mode) every 5 bytes are a node,
 * handed to `onNode`. A malformed node is skipped one byte at a time until the stream is in step again;
 * bytes skipped that way, and bytes that are no descriptor, are counted in `noise`.
 */
export class RplidarDecoder {
  private buf: Buffer = Buffer.alloc(0);
  private scanning = false;
  /** Bytes that were neither a response nor a well-formed node, since the last `takeNoise()`. */
  noise = 0;
  /** Well-formed nodes since the last `takeNodes()`. */
  nodes = 0;

  constructor(
    private readonly onEvent: (e: DecoderEvent) => void,
    private readonly onNode: (n: ScanNode) => void,
  ) {}

  /** Forgets partial data and leaves scan mode (after STOP or RESET). */
  reset(): void {
    this.buf = Buffer.alloc(0);
    this.scanning = false;
  }

  takeNoise(): number {
    const n = this.noise;
    this.noise = 0;
    return n;
  }

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let o = 0;
    const b = this.buf;
    for (;;) {
      if (this.scanning) {
        if (b.length - o < 5) break;
        if (!nodeValid(b, o)) {
          this.noise += 1;
          o += 1;
          continue;
        }
        this.nodes += 1;
        this.onNode(parseNode(b, o));
        o += 5;
        continue;
      }
      if (b.length - o < 7) break;
      if (b[o] !== SYNC || b[o + 1] !== SYNC2) {
        this.noise += 1;
        o += 1;
        continue;
      }
      const word = b.readUInt32LE(o + 2);
      const size = word & 0x3fffffff;
      const mode = word >>> 30;
      const type = b[o + 6]!;
      if (mode === 1 && type === TYPE.SCAN) {
        o += 7;
        this.scanning = true;
        this.onEvent({ kind: 'scan-start' });
        continue;
      }
      // A size no answer of this protocol has: not a descriptor, only bytes that look like one.
      if (size > 64) {
        this.noise += 1;
        o += 1;
        continue;
      }
      if (b.length - o < 7 + size) break;
      const data = Buffer.from(b.subarray(o + 7, o + 7 + size));
      o += 7 + size;
      this.onEvent({ kind: 'response', type, data });
    }
    this.buf = o === 0 ? b : Buffer.from(b.subarray(o));
  }
}

/** Slamtec's model byte, as people name the sensors (the high nibble is the family). */
export function modelName(model: number): string {
  const family = model >> 4;
  return family === 1 ? 'A1' : family === 2 ? 'A2' : family === 3 ? 'A3' : family === 4 ? 'C1' : family === 6 ? 'S1' : `model 0x${model.toString(16)}`;
}
