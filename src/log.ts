// The process logger: pino JSON lines off a TTY (journald), readable lines on a TTY, secrets always redacted.
import { pino, type Logger, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';
import { redact, redactDeep } from './redact.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level?: string;
  /** Force readable output (true) or JSON lines (false); default: readable when stderr is a TTY. */
  pretty?: boolean;
  /** Where lines go; default stderr, so stdout stays free for command output and `--events`. */
  destination?: DestinationStream;
  /** Fields put on every line, for example `{ mode, tick }` through child loggers. */
  base?: Record<string, unknown>;
}

/**
 * Builds a logger whose every message, bound field and error passes through `redact`.
 * Redaction happens in pino's `logMethod` hook and `formatters.log`, so child loggers inherit it.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.CORTEX_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'info';
  const usePretty = options.pretty ?? Boolean(process.stderr.isTTY);
  const destination =
    options.destination ??
    (usePretty
      ? pretty({ sync: true, destination: 2, colorize: true, ignore: 'pid,hostname', translateTime: 'HH:MM:ss.l' })
      : pino.destination({ dest: 2, sync: true }));
  return pino(
    {
      level,
      base: options.base ?? {},
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((a) => (typeof a === 'string' ? redact(a) : a)) as typeof args;
          method.apply(this, cleaned);
        },
      },
      formatters: {
        log(object) {
          return redactDeep(object) as Record<string, unknown>;
        },
        bindings(bindings) {
          return redactDeep(bindings) as Record<string, unknown>;
        },
      },
      serializers: {
        err: (e: unknown) => {
          if (e instanceof Error) return { type: e.name, message: redact(e.message), code: (e as { code?: unknown }).code };
          return { message: redact(String(e)) };
        },
      },
    },
    destination,
  );
}

let root: Logger | undefined;

/** The shared process logger, created on first use. */
export function log(): Logger {
  root ??= createLogger();
  return root;
}

/** Replaces the shared logger (tests and the CLI's --log-level). */
export function setLogger(logger: Logger): void {
  root = logger;
}
