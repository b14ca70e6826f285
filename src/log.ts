// The process logger: pino JSON lines off a TTY (journald), readable lines on a TTY, secrets always redacted.
import { pino, type Logger, type DestinationStream } from 'pino';
import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';
import { CortexError } from './errors.js';
import { redact, redactDeep } from './redact.js';

export type { Logger } from 'pino';

/** pino-pretty (about 40 ms of CPU to load) is loaded only for readable lines, never for journald's JSON. */
function loadPretty(): typeof PinoPretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

export interface LoggerOptions {
  level?: string;
  /** Force readable output (true) or JSON lines (false); default: readable when stderr is a TTY. */
  pretty?: boolean;
  /** Colours in readable output; default: on unless NO_COLOR is set to a non-empty value (https://no-color.org). */
  color?: boolean;
  /** Where lines go; default stderr, so stdout stays free for command output and `--events`. */
  destination?: DestinationStream;
  /** Fields put on every line, for example `{ mode, tick }` through child loggers. */
  base?: Record<string, unknown>;
  /** Also handed every line (JSON, redacted) after it is written: a recording's log channel. */
  tee?: (line: string) => void;
}

/** pino's levels, the values CORTEX_LOG_LEVEL and LOG_LEVEL may take. */
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * The log level the environment asks for: CORTEX_LOG_LEVEL, else LOG_LEVEL; an empty or blank value
 * counts as unset. Anything else than a pino level is refused with the variable's name and the levels.
 */
export function envLogLevel(): string | undefined {
  for (const name of ['CORTEX_LOG_LEVEL', 'LOG_LEVEL']) {
    const value = process.env[name]?.trim().toLowerCase();
    if (!value) continue;
    if (!LEVELS.includes(value)) throw new CortexError('log_level', `${name}="${process.env[name]}" is not a log level: use one of ${LEVELS.join(', ')}`);
    return value;
  }
  return undefined;
}

/**
 * Builds a logger whose every message, bound field and error passes through `redact`.
 * Redaction happens in pino's `logMethod` hook and `formatters.log`, so child loggers inherit it.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? envLogLevel() ?? 'info';
  const usePretty = options.pretty ?? Boolean(process.stderr.isTTY);
  const color = options.color ?? colorAllowed();
  const destination = redactingDestination(
    options.destination ??
      (usePretty
        ? loadPretty()({ sync: true, destination: 2, colorize: color, ignore: 'pid,hostname', translateTime: 'HH:MM:ss.l' })
        : pino.destination({ dest: 2, sync: true })),
    options.tee,
  );
  const logger = pino(
    {
      level,
      base: options.base ?? {},
      hooks: {
        logMethod(args, method) {
          // Strings are redacted; values interpolated into the message (`%j`, `%o`) lose secret fields too.
          const messageAt = args.findIndex((a) => typeof a === 'string');
          const cleaned = args.map((a, i) => (typeof a === 'string' ? redact(a) : messageAt >= 0 && i > messageAt ? redactDeep(a) : a)) as typeof args;
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
        // formatters.log runs first and has turned Errors into `{ name, message, code }` already.
        err: (e: unknown) => {
          if (e && typeof e === 'object') {
            const { name, message, code } = e as { name?: unknown; message?: unknown; code?: unknown };
            return { type: typeof name === 'string' ? name : 'Error', message: redact(String(message ?? '')), ...(code !== undefined ? { code } : {}) };
          }
          return { message: redact(String(e)) };
        },
      },
    },
    destination,
  );
  // pino applies formatters.bindings to the root only; child bindings are redacted here.
  const child = logger.child;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, redactDeep(bindings) as typeof bindings, childOptions);
  } as typeof logger.child;
  return logger;
}

/** NO_COLOR (https://no-color.org): present and not empty means no ANSI colour codes, whatever the terminal. */
export function colorAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.NO_COLOR;
}

/**
 * The last line of defence: every line is redacted as text before it reaches the stream, so a
 * secret that slipped past the structured redaction (an Error's message used as `msg`, a binding,
 * an interpolated value) is still removed. Secret shapes never contain JSON quotes, so redacting
 * the serialised line cannot break it.
 */
function redactingDestination(stream: DestinationStream, tee?: (line: string) => void): DestinationStream {
  const target = stream as DestinationStream & { flush?: (cb?: (err?: Error) => void) => void; flushSync?: () => void; end?: () => void };
  return {
    write: (line: string) => {
      const clean = redact(line);
      target.write(clean);
      tee?.(clean);
    },
    ...(target.flush ? { flush: (cb?: (err?: Error) => void) => target.flush!(cb) } : {}),
    ...(target.flushSync ? { flushSync: () => target.flushSync!() } : {}),
    ...(target.end ? { end: () => target.end!() } : {}),
  } as DestinationStream;
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

/**
 * A child logger with `fields`, leaving out those the logger already carries with the same value:
 * pino writes every binding of every ancestor, so binding `mode` twice would print it twice.
 */
export function childWith(logger: Logger, fields: Record<string, unknown>): Logger {
  const bound = logger.bindings();
  const fresh = Object.fromEntries(Object.entries(fields).filter(([k, v]) => bound[k] !== v));
  return Object.keys(fresh).length ? logger.child(fresh) : logger;
}
