// Hostile images for the service's abuse tests and bench: a PNG decompression bomb and a progressive JPEG of thousands of scans.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

/**
 * A valid PNG of `width`x`height` whose pixels are all zero, so it compresses about a thousand to
 * one: 4096x2048 at 16-bit RGB is 49 KB on the wire and 50 MB decoded (the audit's 43 KB bomb took
 * the vision worker to 1.1 GB).
 */
export function pngBomb(width: number, height: number, opts: { depth?: 8 | 16; colorType?: 0 | 2 | 4 | 6 } = {}): Buffer {
  const depth = opts.depth ?? 16;
  const colorType = opts.colorType ?? 2;
  const row = 1 + Math.ceil((width * CHANNELS[colorType]! * depth) / 8);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = depth;
  ihdr[9] = colorType;
  const idat = deflateSync(Buffer.alloc(row * height), { level: 9 });
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

/** A real progressive JPEG (2048x2048, 10 scans, written by OpenCV's libjpeg). */
export function progressiveJpeg(): Buffer {
  // From test/support (tests) or dist/test/support (benches): the fixture stays in the source tree.
  const candidates = ['../fixtures/service/progressive-2048.jpg', '../../../test/fixtures/service/progressive-2048.jpg'];
  const path = candidates.map((c) => fileURLToPath(new URL(c, import.meta.url))).find((p) => existsSync(p));
  if (!path) throw new Error(`progressive-2048.jpg not found beside ${fileURLToPath(import.meta.url)}`);
  return readFileSync(path);
}

/** The [start, end) offsets of each scan (SOS segment and its entropy-coded data) of a JPEG. */
export function jpegScans(jpeg: Buffer): Array<[number, number]> {
  const scans: Array<[number, number]> = [];
  let i = 2;
  while (i + 3 < jpeg.length && jpeg[i] === 0xff && jpeg[i + 1] !== 0xd9) {
    const marker = jpeg[i + 1]!;
    let end = i + 2 + jpeg.readUInt16BE(i + 2);
    if (marker === 0xda) {
      for (let j = jpeg.indexOf(0xff, end); j !== -1; j = jpeg.indexOf(0xff, j + 1)) {
        const b = jpeg[j + 1]!;
        if (b !== 0x00 && (b < 0xd0 || b > 0xd7)) {
          end = j;
          break;
        }
      }
      scans.push([i, end]);
    }
    i = end;
  }
  return scans;
}

/**
 * `progressiveJpeg()` with its shortest scan (16 bytes) repeated until it has `scans` scans: libjpeg
 * walks the whole image once per scan (warning about the progression and going on), so 1,000 scans
 * take it seconds and 60,000 many minutes, in a 1 MB file.
 */
export function manyScanJpeg(scans: number): Buffer {
  const base = progressiveJpeg();
  const all = jpegScans(base);
  const [a, b] = all.reduce((x, y) => (y[1] - y[0] < x[1] - x[0] ? y : x));
  const extra = Math.max(0, scans - all.length);
  return Buffer.concat([base.subarray(0, b), ...Array.from({ length: extra }, () => base.subarray(a, b)), base.subarray(b)]);
}
