// Reads an image's dimensions from its JPEG or PNG header without decoding it, so a frame too large to decode is refused first.

export interface ImageHeader {
  format: 'jpeg' | 'png';
  width: number;
  height: number;
  /**
   * JPEG: its scans (SOS markers), counted through the entropy-coded data up to `maxScans + 1`
   * (a progressive JPEG decodes the whole image once per scan). PNG: 1.
   */
  scans: number;
}

/** Start-of-frame markers (baseline, extended, progressive, lossless; Huffman and arithmetic). */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
/** Markers that stand alone, without a length. */
const STANDALONE = new Set([0x01, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8]);
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The format, size and scan count an image declares, or a reason it cannot be read: `not a JPEG or
 * PNG image`, `JPEG header ends before its size`, `JPEG declares no height`. Walks JPEG segments by
 * their lengths, and the entropy-coded data after each scan to the next marker, counting scans and
 * stopping once there are more than `maxScans` (linear, never past the buffer).
 */
export function readImageHeader(buf: Buffer, maxScans = 100): ImageHeader | string {
  if (buf.length >= 24 && buf.subarray(0, 8).equals(PNG_SIGNATURE)) {
    if (buf.toString('latin1', 12, 16) !== 'IHDR') return 'PNG without an IHDR chunk';
    return { format: 'png', width: buf.readUInt32BE(16), height: buf.readUInt32BE(20), scans: 1 };
  }
  if (buf.length < 4 || buf[0] !== 0xff || buf[1] !== 0xd8) return 'not a JPEG or PNG image';
  let size: { width: number; height: number } | undefined;
  let scans = 0;
  let i = 2;
  while (i + 1 < buf.length) {
    if (buf[i] !== 0xff) {
      if (!size) return 'JPEG header is corrupt';
      // Stray bytes between segments: a decoder skips to the next marker, and so does the count.
      i = nextMarker(buf, i);
      continue;
    }
    while (i < buf.length && buf[i] === 0xff) i++;
    if (i >= buf.length) break;
    const marker = buf[i]!;
    i++;
    if (STANDALONE.has(marker)) continue;
    if (marker === 0xd9) break;
    if (marker === 0xda && !size) return 'JPEG has no frame header before its image data';
    if (i + 2 > buf.length) break;
    const len = buf.readUInt16BE(i);
    if (len < 2) return 'JPEG header is corrupt';
    if (SOF.has(marker) && !size) {
      if (i + 7 > buf.length) break;
      const height = buf.readUInt16BE(i + 3);
      const width = buf.readUInt16BE(i + 5);
      if (height === 0) return 'JPEG declares no height';
      size = { width, height };
    }
    i += len;
    if (marker === 0xda) {
      if (++scans > maxScans) break;
      i = nextMarker(buf, i);
    }
  }
  return size ? { format: 'jpeg', ...size, scans } : 'JPEG header ends before its size';
}

/** The offset of the next marker after entropy-coded data starting at `i`: an 0xFF not followed by 0x00 (stuffing) or a restart marker. */
function nextMarker(buf: Buffer, i: number): number {
  for (let j = buf.indexOf(0xff, i); j !== -1 && j + 1 < buf.length; j = buf.indexOf(0xff, j + 1)) {
    const next = buf[j + 1]!;
    if (next !== 0x00 && next !== 0xff && (next < 0xd0 || next > 0xd7)) return j;
  }
  return buf.length;
}

/** The bounds a frame's header is checked against before it is decoded (ServiceLimits). */
export interface FrameBounds {
  maxSide: number;
  maxPixels: number;
  /** PNG has no reduced decoding: it is decoded whole, so its bound is lower. */
  maxPngPixels: number;
  maxJpegScans: number;
}

/**
 * Why a frame of `h` must not be decoded, or undefined when it is within every bound. The text
 * follows `Invalid frame: ` in the socket's error message.
 */
export function oversize(h: ImageHeader, b: FrameBounds): string | undefined {
  if (h.width === 0 || h.height === 0) return `${h.width}x${h.height} is empty`;
  if (h.width > b.maxSide || h.height > b.maxSide || h.width * h.height > b.maxPixels)
    return `${h.width}x${h.height} is larger than the limit (at most ${b.maxSide} pixels a side and ${b.maxPixels} pixels in all)`;
  if (h.format === 'png' && h.width * h.height > b.maxPngPixels)
    return `a ${h.width}x${h.height} PNG is larger than the PNG limit (${b.maxPngPixels} pixels in all; send JPEG for larger frames)`;
  if (h.scans > b.maxJpegScans) return `the JPEG has more than ${b.maxJpegScans} scans (progressive passes); at most ${b.maxJpegScans} are decoded`;
  return undefined;
}

/**
 * The JPEG decoding scale (1, 2, 4 or 8: libjpeg decodes at 1/N at a fraction of the cost) that
 * brings the longer side to at most `target` pixels. PNG has no reduced decoding: always 1.
 */
export function reductionFor(h: ImageHeader, target = 1280): 1 | 2 | 4 | 8 {
  if (h.format !== 'jpeg') return 1;
  const side = Math.max(h.width, h.height);
  for (const n of [1, 2, 4] as const) if (side / n <= target) return n;
  return 8;
}
