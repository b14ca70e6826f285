// `cortexd run --watch`: watches the configuration file and hands every saved version to the reload
// With each version it says whether the file is the robot's own; a file that is not is treated as pushed.
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, watch, type FSWatcher, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { MAX_CONFIG_BYTES } from './load.js';

/** One saved version of the watched file. */
export interface WatchedVersion {
  text: string;
  sha256: string;
  /** False when another user could have written it: group/other write bit, or an owner other than this process's user. */
  trusted: boolean;
  /** Why it is not trusted (for the refusal), e.g. `writable by its group (mode 0664)`. */
  why?: string;
}

export interface WatchOptions {
  /** Quiet time after the last change before the file is read (editors write in several steps). */
  settleMs?: number;
  onVersion: (v: WatchedVersion) => void;
  onError: (message: string) => void;
  /** The service user's uid (default: this process's). */
  uid?: number;
}

/** Whether the file `st` describes could have been written by a user other than `uid`. */
export function untrustedBecause(st: Pick<Stats, 'uid' | 'mode'>, uid: number): string | undefined {
  const mode = `mode 0${(st.mode & 0o777).toString(8)}`;
  if (st.uid !== uid) return `owned by uid ${st.uid}, not by the service user (uid ${uid})`;
  if (st.mode & 0o002) return `writable by every user (${mode})`;
  if (st.mode & 0o020) return `writable by its group (${mode})`;
  return undefined;
}

/** Reads the file and its owner and mode from the same descriptor (no window between the check and the read). */
export function readVersion(path: string, uid: number): WatchedVersion {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error('not a regular file');
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > MAX_CONFIG_BYTES) throw new Error(`larger than ${MAX_CONFIG_BYTES} bytes`);
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    const bytes = Buffer.concat(chunks);
    const why = untrustedBecause(st, uid);
    return { text: bytes.toString('utf8'), sha256: createHash('sha256').update(bytes).digest('hex'), trusted: why === undefined, ...(why ? { why } : {}) };
  } finally {
    closeSync(fd);
  }
}

/**
 * Watches the directory of `file` (editors often save by renaming a new file over the old one) and,
 * once changes settle, reads the file and calls `onVersion` when its bytes differ from the last
 * version seen (`initialSha256`: the version running now). Stop it with `close()`.
 */
export class ConfigWatcher {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private last: string | undefined;

  constructor(
    private readonly file: string,
    private readonly options: WatchOptions,
    initialSha256?: string,
  ) {
    this.last = initialSha256;
  }

  start(): void {
    const name = basename(this.file);
    this.watcher = watch(dirname(this.file), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.check(), this.options.settleMs ?? 200);
    });
    this.watcher.on('error', (err) => this.options.onError(`--watch: ${err.message}`));
  }

  close(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
  }

  private check(): void {
    let v: WatchedVersion;
    try {
      v = readVersion(this.file, this.options.uid ?? process.getuid?.() ?? 0);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A save in progress (the file renamed away for a moment) is not worth a message.
      if (code !== 'ENOENT') this.options.onError(`--watch: cannot read ${this.file}: ${code ?? (err as Error).message}`);
      return;
    }
    if (v.sha256 === this.last) return;
    this.last = v.sha256;
    this.options.onVersion(v);
  }
}
