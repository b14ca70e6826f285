// Keeps a mode's conversation history in the state directory: bounded, redacted like logs, written atomically, read back at start.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import { removeStaleTemps, writeJsonAtomicAsync } from '../atomic-file.js';
import { describeError } from '../errors.js';
import { redact } from '../redact.js';
import type { HistorySnapshot } from './history.js';

/** Longest prompt or answer kept on disk, in characters (a fused prompt with vision text can be long). */
export const MAX_STORED_CHARS = 4000;
/** Most exchanges kept on disk (a history never holds more than 2 x history_length; this bounds a hand-edited file). */
export const MAX_STORED_EXCHANGES = 200;

const StoredHistory = z.object({
  version: z.literal(1),
  saved_at: z.string().optional(),
  summary: z.string(),
  exchanges: z.array(z.object({ prompt: z.string(), answer: z.string() })),
});

/** `<state dir>/history/<config>/<mode>.json`, with names made safe for a file system. */
export function historyFileOf(stateDir: string, configName: string, mode: string): string {
  const safe = (s: string) =>
    encodeURIComponent(s)
      .replace(/\*/g, '%2A')
      .replace(/^\.+/, (m) => '%2E'.repeat(m.length)) || '_';
  return join(stateDir, 'history', safe(configName), `${safe(mode)}.json`);
}

const cut = (s: string) => (s.length > MAX_STORED_CHARS ? `${s.slice(0, MAX_STORED_CHARS - 1)}…` : s);

/** What goes to disk: secrets redacted as in logs, each text cut, the newest exchanges only. */
export function storedForm(snapshot: HistorySnapshot): z.infer<typeof StoredHistory> {
  return {
    version: 1,
    saved_at: new Date().toISOString(),
    summary: cut(redact(snapshot.summary)),
    exchanges: snapshot.exchanges.slice(-MAX_STORED_EXCHANGES).map((e) => ({ prompt: cut(redact(e.prompt)), answer: cut(redact(e.answer)) })),
  };
}

/**
 * Reads a saved history. A missing file is a fresh start (undefined); a file that is not a history
 * (corrupt, hand-edited) is reported through `logger` and ignored, never overwritten until the next
 * answer replaces it. Temporary files left by a write that a kill -9 interrupted are removed.
 */
export function loadHistory(file: string, logger?: Logger): HistorySnapshot | undefined {
  removeStaleTemps(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') logger?.warn(`conversation history ${file} not read: ${describeError(err)}`);
    return undefined;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    logger?.warn(`conversation history ${file} is not JSON; starting without it`);
    return undefined;
  }
  const parsed = StoredHistory.safeParse(data);
  if (!parsed.success) {
    logger?.warn(`conversation history ${file} is not a history (${parsed.error.issues[0]?.message ?? 'bad shape'}); starting without it`);
    return undefined;
  }
  return { summary: parsed.data.summary, exchanges: parsed.data.exchanges.slice(-MAX_STORED_EXCHANGES) };
}

/**
 * Saves a history after each change as one atomic write (temporary file, fsync, rename, fsync of the
 * directory: after a kill -9 the file holds the old history or the new one, never a mix), done in the
 * thread pool so the fsync never stalls the tick or the e-stop path. One write is in flight at a time;
 * changes that come meanwhile are coalesced into the next one, so the file always moves forward. An
 * answer is on disk a few milliseconds after it came on an idle disk (a kill -9 loses at most the write in
 * flight and what came after it, never a whole file). `flush()`
 * starts writing what is pending now (at stop); the pending write keeps the process alive until done.
 */
export class HistoryPersister {
  private pending: HistorySnapshot | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly file: string,
    private readonly logger?: Logger,
  ) {}

  save(snapshot: HistorySnapshot): void {
    this.pending = snapshot;
    this.flush();
  }

  /** Starts writing what is pending, unless a write is in flight (it takes the pending one next); resolves when all is written. */
  flush(): Promise<void> {
    this.writing ??= this.drain().finally(() => {
      this.writing = undefined;
      // A change that came after the loop's last look is written now.
      if (this.pending) void this.flush();
    });
    return this.writing;
  }

  private async drain(): Promise<void> {
    for (let snapshot = this.pending; snapshot; snapshot = this.pending) {
      this.pending = undefined;
      try {
        await writeJsonAtomicAsync(this.file, storedForm(snapshot));
      } catch (err) {
        this.logger?.warn(`conversation history not saved to ${this.file}: ${describeError(err)}`);
      }
    }
  }
}
