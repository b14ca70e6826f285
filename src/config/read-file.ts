// Reads a configuration-side file safely: only a regular file (after symlinks), never more than a limit, never blocking on a FIFO.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** Why a file could not be read, as a message for the problem list (no path: callers name the file). */
export class UnreadableFile extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Reads `path` as UTF-8. Rules:
 * - symlinks are followed, and what they lead to must be a regular file (a link to /dev/zero, a FIFO,
 *   a device or a directory is refused by its kind);
 * - the file is opened with O_NONBLOCK, so opening a FIFO returns at once instead of waiting for a
 *   writer, and the kind is checked on the opened descriptor (no window between check and read);
 * - at most `maxBytes` are read: the limit is checked on the bytes actually read, not on the size
 *   the file claims (files in /proc claim 0 bytes).
 * Throws UnreadableFile with a message such as `is a FIFO (named pipe), not a regular file`.
 */
export function readRegularFile(path: string, maxBytes: number): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'file not found'
        : code === 'EISDIR'
          ? 'is a directory, not a file'
          : code === 'ELOOP'
            ? 'symbolic link loop'
            : `cannot read: ${code ?? String(err)}`;
    throw new UnreadableFile(message, code);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      const kind = kindOf(st);
      throw new UnreadableFile(kind === 'a directory' ? 'is a directory, not a file' : `is ${kind}, not a regular file`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new UnreadableFile(`file is larger than the limit of ${maxBytes} bytes`);
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } catch (err) {
    if (err instanceof UnreadableFile) throw err;
    throw new UnreadableFile(`cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  } finally {
    closeSync(fd);
  }
}
