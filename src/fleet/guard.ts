// Replay and expiry checks of fleet commands: an id is accepted once, a command past its expiry (or claiming too long a life) never
// The ids seen reach disk in batches, off the command's path.
import { readFileSync } from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface GuardOptions {
  /** Longest life a command may claim: `expires_at - now` above this is refused. */
  maxTtlMs: number;
  /**
   * Where the ids seen are kept until they expire (`<state dir>/fleet/<robot>.commands.json`), so a
   * command replayed after a restart is refused too; in memory only when absent.
   */
  file?: string;
  /** Ids remembered at most; past it (only under a flood of live commands) new commands are refused. */
  maxEntries?: number;
  /**
   * Longest time an admitted id waits before it is written (default 200 ms): every id admitted
   * meanwhile goes out in the same write, asynchronously, so a flood of commands costs one write per
   * interval, not one synchronous fsync per command. A crash loses at most this window.
   */
  flushDelayMs?: number;
  onWarning?: (message: string) => void;
}

export type GuardVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Remembers every accepted id until its command expires: a command can never be replayed while it
 * is still valid, and a stale one is refused by its expiry, so memory stays bounded by the rate of
 * commands times `maxTtlMs`. The robot's clock is the judge (fleets run NTP).
 */
export class CommandGuard {
  private readonly seen = new Map<string, number>();
  private readonly maxEntries: number;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private dirty = false;
  private closed = false;
  /** Writes done (tests, metrics). */
  writes = 0;

  constructor(private readonly options: GuardOptions) {
    this.maxEntries = options.maxEntries ?? 100_000;
    if (options.file) this.load(options.file);
  }

  /** Checks `cmd` at `now` and, when accepted, remembers its id. */
  admit(cmd: { id: string; expires_at: number }, now = Date.now()): GuardVerdict {
    if (cmd.expires_at <= now)
      return {
        ok: false,
        reason: `stale: it expired ${Math.ceil((now - cmd.expires_at) / 1000)} s ago (at ${new Date(cmd.expires_at).toISOString()}, robot clock)`,
      };
    if (cmd.expires_at - now > this.options.maxTtlMs) {
      return {
        ok: false,
        reason: `expires too far ahead: a command may live at most ${Math.round(this.options.maxTtlMs / 1000)} s (fleet.command_max_ttl_seconds)`,
      };
    }
    if (this.seen.has(cmd.id)) return { ok: false, reason: `replayed: command ${cmd.id} was received before` };
    if (this.seen.size >= this.maxEntries) this.prune(now);
    if (this.seen.size >= this.maxEntries) return { ok: false, reason: `too many live commands (${this.maxEntries} not yet expired): try again later` };
    this.seen.set(cmd.id, cmd.expires_at);
    this.schedule();
    return { ok: true };
  }

  /** Writes what is not on disk yet, now; resolves when it is (or the write failed, reported as a warning). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (!this.dirty || !this.options.file) return;
    this.dirty = false;
    this.writing = this.write(this.options.file).finally(() => (this.writing = undefined));
    await this.writing;
  }

  /** Flushes and stops scheduling writes (the owner is stopping). */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  /** Ids remembered now (tests, metrics). */
  get size(): number {
    return this.seen.size;
  }

  private prune(now: number): void {
    for (const [id, exp] of this.seen) if (exp <= now) this.seen.delete(id);
  }

  private load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return;
    }
    try {
      const data = JSON.parse(text) as { version?: unknown; seen?: unknown };
      if (data.version !== 1 || !data.seen || typeof data.seen !== 'object') throw new Error('unknown format');
      const now = Date.now();
      for (const [id, exp] of Object.entries(data.seen as Record<string, unknown>)) if (typeof exp === 'number' && exp > now) this.seen.set(id, exp);
    } catch (err) {
      this.options.onWarning?.(`fleet: ${file} is not a command record (${(err as Error).message}); starting with none`);
    }
  }

  private schedule(): void {
    if (!this.options.file) return;
    this.dirty = true;
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.flush(), this.options.flushDelayMs ?? 200);
    this.timer.unref?.();
  }

  /** Atomic like src/atomic-file.ts (temporary file 0600, fsync, rename, directory fsync), but asynchronous. */
  private async write(file: string): Promise<void> {
    this.prune(Date.now());
    const text = JSON.stringify({ version: 1, seen: Object.fromEntries(this.seen) });
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      const fh = await open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(`${text}\n`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, file);
      const dir = await open(dirname(file), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
      this.writes += 1;
    } catch (err) {
      await unlink(tmp).catch(() => {});
      this.dirty = true;
      this.options.onWarning?.(`fleet: cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
}
