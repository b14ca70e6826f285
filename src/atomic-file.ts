// Atomic state files: a reader (or a restart after kill -9) sees the old content or the new, never a torn write.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `data` as JSON to `path`: a temporary file beside it (mode 0600), fsync, rename over the
 * old file, then fsync of the directory so the rename itself survives a power cut. The directory is
 * created (0700) when missing. Throws on failure, leaving the old file untouched.
 */
export function writeJsonAtomic(path: string, data: unknown): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeFileSync(fd, `${JSON.stringify(data, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* the temporary file may not exist */
    }
    throw err;
  }
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

/**
 * `writeJsonAtomic` off the event loop: the same steps (temporary file, fsync, rename, fsync of the
 * directory) in libuv's thread pool, so a slow disk never stalls a tick or the e-stop socket. Callers
 * that write one file repeatedly must chain the writes (one in flight at a time), as
 * HistoryPersister does, so an older content never lands after a newer one.
 */
export async function writeJsonAtomicAsync(path: string, data: unknown): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    const file = await open(tmp, 'w', 0o600);
    try {
      await file.writeFile(`${JSON.stringify(data, null, 2)}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  const dirHandle = await open(dir, 'r');
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}

/** True when no process has this id (a writer that a kill -9 ended); a process of another user counts as alive. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Removes the temporary files of `path` (`<path>.<pid>.tmp`) whose writer is no longer running: what a
 * kill -9 in the middle of writeJsonAtomic leaves. Called when a state file is read at start. A write
 * still in progress (this process's, or another live agent's) is left alone. Never throws.
 */
export function removeStaleTemps(path: string): string[] {
  const removed: string[] = [];
  try {
    const prefix = `${basename(path)}.`;
    for (const name of readdirSync(dirname(path))) {
      const m = name.startsWith(prefix) ? /^\.(\d+)\.tmp$/.exec(name.slice(prefix.length - 1)) : null;
      if (!m) continue;
      const pid = Number(m[1]);
      if (pid === process.pid || !gone(pid)) continue;
      rmSync(join(dirname(path), name), { force: true });
      removed.push(name);
    }
  } catch {
    /* no directory yet */
  }
  return removed;
}
