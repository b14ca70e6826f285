// Typed errors of the hosted-API client: one class per HTTP status family, socket upgrade failures, validation and transport faults.
import { CortexError } from '../errors.js';
import { redact } from '../redact.js';
import { ErrorBodySchema } from './protocol.js';

/** Request rejected by our own validation before anything was sent. */
export class CloudValidationError extends CortexError {
  readonly endpoint: string;
  readonly issues: string[];
  constructor(endpoint: string, issues: string[]) {
    super('cloud_invalid_request', `invalid request to ${endpoint}: ${issues.join('; ')}`);
    this.name = 'CloudValidationError';
    this.endpoint = endpoint;
    this.issues = issues;
  }
}

/**
 * A non-2xx HTTP answer. `message` is one line: `<status>: <server error text>`; `serverMessage` is the
 * body's `error` field (or a short description when the body is not the spec's `{error}` shape).
 */
export class CloudHttpError extends CortexError {
  readonly status: number;
  /** `METHOD /path`, never with a query string. */
  readonly endpoint: string;
  readonly serverMessage: string;
  readonly details?: string;
  /** Milliseconds the server asked us to wait (Retry-After), when it said so. */
  readonly retryAfterMs?: number;
  constructor(status: number, endpoint: string, serverMessage: string, extra: { details?: string; retryAfterMs?: number } = {}) {
    super(`cloud_http_${status}`, `${status}: ${serverMessage}${extra.details ? ` (${extra.details})` : ''}`);
    this.name = 'CloudHttpError';
    this.status = status;
    this.endpoint = endpoint;
    this.serverMessage = redact(serverMessage);
    if (extra.details !== undefined) this.details = redact(extra.details);
    if (extra.retryAfterMs !== undefined) this.retryAfterMs = extra.retryAfterMs;
  }
}

/** 400: malformed body or missing field. */
export class CloudBadRequestError extends CloudHttpError {
  override name = 'CloudBadRequestError';
}
/** 401: missing or invalid API key / JWT (`User not found` on account endpoints). */
export class CloudAuthError extends CloudHttpError {
  override name = 'CloudAuthError';
}
/** 403: forbidden, e.g. the plan's key limit. */
export class CloudForbiddenError extends CloudHttpError {
  override name = 'CloudForbiddenError';
}
/** 404: unknown provider, unsupported model, unknown key, user without account. */
export class CloudNotFoundError extends CloudHttpError {
  override name = 'CloudNotFoundError';
}
/** 429: rate limited; `retryAfterMs` set when the server sent Retry-After. */
export class CloudRateLimitError extends CloudHttpError {
  override name = 'CloudRateLimitError';
}
/** 500: the server failed processing. */
export class CloudServerError extends CloudHttpError {
  override name = 'CloudServerError';
}
/**
 * 503: `reason` tells `<x> API key not configured` (a configuration problem: not retried) from
 * `Failed to connect to <x> server` (the upstream is unreachable: retried).
 */
export class CloudUnavailableError extends CloudHttpError {
  override name = 'CloudUnavailableError';
  get reason(): 'key_not_configured' | 'unreachable' | 'other' {
    if (/API key not configured/i.test(this.serverMessage)) return 'key_not_configured';
    if (/Failed to connect to/i.test(this.serverMessage)) return 'unreachable';
    return 'other';
  }
}

const BY_STATUS: Record<number, typeof CloudHttpError> = {
  400: CloudBadRequestError,
  401: CloudAuthError,
  403: CloudForbiddenError,
  404: CloudNotFoundError,
  429: CloudRateLimitError,
  500: CloudServerError,
  503: CloudUnavailableError,
};

/** Builds the typed error of a non-2xx response from its status, raw body text and Retry-After. */
export function httpErrorFrom(status: number, endpoint: string, bodyText: string, retryAfterMs?: number): CloudHttpError {
  let serverMessage = bodyText.trim() ? bodyText.trim().slice(0, 300) : `HTTP ${status} with an empty body`;
  let details: string | undefined;
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(bodyText));
    if (parsed.success) {
      serverMessage = parsed.data.error;
      details = parsed.data.details;
    }
  } catch {
    // Not JSON: keep the (truncated) text, which is what a proxy in between usually sends.
  }
  const Cls = BY_STATUS[status] ?? (status >= 500 ? CloudServerError : CloudHttpError);
  const extra: { details?: string; retryAfterMs?: number } = {};
  if (details !== undefined) extra.details = details;
  if (retryAfterMs !== undefined) extra.retryAfterMs = retryAfterMs;
  return new Cls(status, endpoint, serverMessage, extra);
}

/**
 * The connection failed or broke. `beforeFirstByte` is true when no byte of a response arrived, which
 * is the only case in which a transport failure may be retried.
 */
export class CloudNetworkError extends CortexError {
  readonly endpoint: string;
  readonly beforeFirstByte: boolean;
  /** errno-style code of the cause when known, e.g. ECONNRESET, ECONNREFUSED. */
  readonly causeCode?: string;
  constructor(endpoint: string, beforeFirstByte: boolean, cause: unknown) {
    const code = causeCodeOf(cause);
    super('cloud_network', `${endpoint}: connection failed${code ? ` (${code})` : ''}${beforeFirstByte ? '' : ' after the response started'}`, { cause });
    this.name = 'CloudNetworkError';
    this.endpoint = endpoint;
    this.beforeFirstByte = beforeFirstByte;
    if (code) this.causeCode = code;
  }
}

/** A stream broke or the server reported an error after the first byte; never retried. */
export class CloudStreamError extends CortexError {
  readonly endpoint: string;
  constructor(endpoint: string, message: string, options?: { cause?: unknown }) {
    super('cloud_stream', `${endpoint}: ${message}`, options);
    this.name = 'CloudStreamError';
    this.endpoint = endpoint;
  }
}

/** The server sent something that does not match the protocol. */
export class CloudProtocolError extends CortexError {
  readonly endpoint: string;
  constructor(endpoint: string, message: string) {
    super('cloud_protocol', `${endpoint}: ${message}`);
    this.name = 'CloudProtocolError';
    this.endpoint = endpoint;
  }
}

/**
 * A socket could not be opened. `fatal` is true for 401/403 at the upgrade: retrying cannot help and
 * the stream actor must stop with `message` (the server's `{error}` text) instead of backing off.
 */
export class CloudSocketError extends CortexError {
  readonly endpoint: string;
  readonly status?: number;
  readonly serverMessage: string;
  readonly fatal: boolean;
  constructor(endpoint: string, serverMessage: string, opts: { status?: number; fatal?: boolean; cause?: unknown } = {}) {
    super(opts.status ? `cloud_socket_${opts.status}` : 'cloud_socket', opts.status ? `${opts.status}: ${serverMessage}` : serverMessage, {
      cause: opts.cause,
    });
    this.name = 'CloudSocketError';
    this.endpoint = endpoint;
    if (opts.status !== undefined) this.status = opts.status;
    this.serverMessage = redact(serverMessage);
    this.fatal = opts.fatal ?? false;
  }
}

/** 401 at a socket upgrade: missing or invalid `api_key`. Always fatal. */
export class CloudSocketAuthError extends CloudSocketError {
  constructor(endpoint: string, serverMessage: string) {
    super(endpoint, serverMessage, { status: 401, fatal: true });
    this.name = 'CloudSocketAuthError';
  }
}

/** Finds an errno code (ECONNRESET...) on an error or its cause chain (undici wraps it in `cause`). */
export function causeCodeOf(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$|^UND_ERR/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** True for the AbortError (or TimeoutError) thrown by an aborted signal. */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}
