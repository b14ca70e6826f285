// Reads and writes the RIFF/WAVE header of 16-bit PCM, so WAV and raw PCM can be replayed and played alike.
import { DeviceError } from './device-error.js';

export interface WavInfo {
  rate: number;
  channels: number;
  bitsPerSample: number;
  /** The PCM samples (the `data` chunk). */
  data: Buffer;
}

/** True when the buffer starts like a RIFF/WAVE file. */
export function isWav(buf: Buffer): boolean {
  return buf.length >= 12 && buf.toString('ascii', 0, 4) === 'RIFF' && buf.toString('ascii', 8, 12) === 'WAVE';
}

/** Parses a PCM WAV file: walks the chunks for `fmt ` and `data` (other chunks, e.g. LIST, are skipped). */
export function parseWav(buf: Buffer): WavInfo {
  if (!isWav(buf)) throw new DeviceError('microphone', 'not a RIFF/WAVE file', { code: 'wav_invalid' });
  let offset = 12;
  let fmt: { format: number; channels: number; rate: number; bits: number } | undefined;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    let size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      fmt = { format: buf.readUInt16LE(body), channels: buf.readUInt16LE(body + 2), rate: buf.readUInt32LE(body + 4), bits: buf.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!fmt) break;
      // Streamed WAVs (sox, ffmpeg to a pipe) may carry 0 or 0xFFFFFFFF as the data size: take the rest.
      if (size === 0 || body + size > buf.length) size = buf.length - body;
      if (fmt.format !== 1 && fmt.format !== 0xfffe) throw new DeviceError('microphone', `WAV format ${fmt.format} is not PCM`, { code: 'wav_invalid' });
      return { rate: fmt.rate, channels: fmt.channels, bitsPerSample: fmt.bits, data: buf.subarray(body, body + size) };
    }
    offset = body + size + (size % 2);
  }
  throw new DeviceError('microphone', 'WAV file has no fmt/data chunk', { code: 'wav_invalid' });
}

/** A 44-byte header for `dataBytes` of 16-bit PCM. */
export function wavHeader(dataBytes: number, rate: number, channels = 1): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}
