// Chunk compression of recordings: LZ4 frames (MCAP's `lz4`, which Foxglove and Lichtblick read), in pure JS so no native build is added.
import { compress, decompress } from 'lz4js';

export const compressChunk = (data: Uint8Array) => ({ compression: 'lz4', compressedData: compress(data) });

/** For @mcap/core's readers. */
export const decompressHandlers = {
  lz4: (buffer: Uint8Array, decompressedSize: bigint): Uint8Array => {
    const size = Number(decompressedSize);
    const out = decompress(buffer, size);
    return out.length === size ? out : out.subarray(0, size);
  },
};
