// Waits for something to close, at most a given time: a stuck close never holds the process's exit.
import type { Logger } from 'pino';
import { describeError } from '../../src/errors.js';

/** Waits for `p` at most `ms`, logging a failure or the timeout; never rejects. */
export async function bounded(what: string, p: Promise<unknown>, ms: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(() => (logger.warn(`${what}: still closing after ${ms} ms, going on`), resolve()), ms)));
  try {
    await Promise.race([p.catch((err) => logger.warn(`${what}: ${describeError(err)}`)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
