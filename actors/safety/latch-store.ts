// Keeps a latched e-stop on disk, so a restart (a crash, systemd's Restart=on-failure) comes back latched instead of silently releasing it.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Latch } from '../../src/safety/policy.js';
import { describeError } from '../../src/errors.js';

export interface LatchStore {
  /** The latch found at start, or null. A file that cannot be read counts as latched (the safe reading). */
  load(): Latch | null;
  /** Saves the latch (null: released); never throws (a failure goes to `onError`). Writes are serialised. */
  save(latch: Latch | null): void;
  /** Resolves when the writes started so far are on disk. */
  flush(): Promise<void>;
}

export const latchPath = (stateDir: string, configName: string): string => join(stateDir, `safety-${configName}.json`);

export function fileLatchStore(path: string, onError: (message: string) => void): LatchStore {
  let chain: Promise<void> = Promise.resolve();
  const write = async (latch: Latch | null) => {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(`${JSON.stringify({ version: 1, latched: latch !== null, ...(latch ? { latch } : {}) })}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  };
  return {
    load() {
      if (!existsSync(path)) return null;
      try {
        const data = JSON.parse(readFileSync(path, 'utf8')) as { latched?: unknown; latch?: Partial<Latch> };
        if (data.latched !== true) return null;
        const l = data.latch ?? {};
        return { source: String(l.source ?? 'unknown'), reason: String(l.reason ?? 'latched before the restart'), at: Number(l.at ?? 0) };
      } catch (err) {
        onError(`the saved e-stop state ${path} cannot be read (${describeError(err)}): starting latched`);
        return { source: 'state file', reason: 'the saved e-stop state could not be read', at: Date.now() };
      }
    },
    save(latch) {
      chain = chain
        .then(() => write(latch))
        .catch((err: unknown) => {
          onError(`cannot save the e-stop state to ${path}: ${describeError(err)}`);
          return unlink(`${path}.${process.pid}.tmp`).catch(() => undefined);
        });
    },
    flush: () => chain,
  };
}
