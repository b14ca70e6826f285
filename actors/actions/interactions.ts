// save_interactions: one JSON line per tick (prompt, answer, actions) in the state directory, rotated by size, N files kept.
import { appendFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { describeError } from '../../src/errors.js';
import { redactDeep } from '../../src/redact.js';

/** One tick that called the model. `at` is an ISO time; arguments and values are the parsed JSON. */
export interface InteractionRecord {
  at?: string;
  mode: string;
  tick: number;
  prompt: string;
  answer: { model?: string; text?: string; tool_calls: Array<{ name: string; arguments: unknown }>; latency_ms?: number };
  /** What was done with the answer: each action dispatched (or dropped, with the reason). */
  actions: Array<{ label: string; value?: unknown; state?: string; error?: string }>;
}

export interface InteractionLogOptions {
  /** Rotate when the current file would pass this size; default 5 MiB. */
  maxBytes?: number;
  /** Files kept, the current one included; default 5. */
  keep?: number;
  logger?: Logger;
}

export interface InteractionLog {
  /** `<stateDir>/interactions/<configName>.jsonl` */
  readonly path: string;
  /** Appends one line; writes are serialised in call order and never throw (failures are logged). */
  append(record: InteractionRecord): Promise<void>;
  /** Resolves when every append so far is on disk. */
  flush(): Promise<void>;
}

/**
 * Rotation: before a line that would make the current file pass `maxBytes`, `<name>.jsonl` becomes
 * `<name>.1.jsonl`, `.1` becomes `.2` and so on; the file beyond `keep - 1` is deleted. A single line
 * larger than `maxBytes` is still written (alone in its file). Secrets are redacted from every field.
 */
export function createInteractionLog(stateDir: string, configName: string, options: InteractionLogOptions = {}): InteractionLog {
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  const keep = Math.max(1, options.keep ?? 5);
  const dir = join(stateDir, 'interactions');
  const safeName = configName.replace(/[^A-Za-z0-9_.-]/g, '_');
  const path = join(dir, `${safeName}.jsonl`);
  const rotated = (n: number) => join(dir, `${safeName}.${n}.jsonl`);
  let size: number | undefined;
  let chain: Promise<void> = Promise.resolve();

  const rotate = async () => {
    await rm(keep > 1 ? rotated(keep - 1) : path, { force: true });
    for (let n = keep - 2; n >= 1; n--) await rename(rotated(n), rotated(n + 1)).catch(() => undefined);
    if (keep > 1) await rename(path, rotated(1)).catch(() => undefined);
    size = 0;
  };

  const write = async (record: InteractionRecord) => {
    if (size === undefined) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      size = await stat(path).then(
        (s) => s.size,
        () => 0,
      );
    }
    const line = `${JSON.stringify(redactDeep({ at: new Date().toISOString(), ...record }))}\n`;
    const bytes = Buffer.byteLength(line);
    if (size > 0 && size + bytes > maxBytes) await rotate();
    await appendFile(path, line, { mode: 0o600 });
    size += bytes;
  };

  return {
    path,
    append(record) {
      const next = chain
        .then(() => write(record))
        .catch((err: unknown) => {
          size = undefined; // re-read the size next time: the file may have been moved away
          options.logger?.warn(`cannot save interaction to ${path}: ${describeError(err)}`);
        });
      chain = next;
      return next;
    },
    flush: () => chain,
  };
}
