// Replay and expiry checks of fleet commands: an id is accepted once, a command past its expiry (or claiming too long a life) never.
import { readFileSync } from 'node:fs';
import { writeJsonAtomic } from '../atomic-file.js';

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

  constructor(private readonly options: GuardOptions) {
    this.maxEntries = options.maxEntries ?? 10_000;
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
    this.save(now);
    return { ok: true };
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

  private save(now: number): void {
    if (!this.options.file) return;
    this.prune(now);
    try {
      writeJsonAtomic(this.options.file, { version: 1, seen: Object.fromEntries(this.seen) });
    } catch (err) {
      this.options.onWarning?.(`fleet: cannot write ${this.options.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
}
