// Types of lz4js (pure-JS LZ4 frame format), the parts the recorder uses.
declare module 'lz4js' {
  /** LZ4 frame of `data`. */
  export function compress(data: Uint8Array, maxSize?: number): Uint8Array;
  /** The bytes of an LZ4 frame; `maxSize` sizes the output when known. */
  export function decompress(data: Uint8Array, maxSize?: number): Uint8Array;
}
