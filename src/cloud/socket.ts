// One JSON WebSocket of the hosted API: key in the query, typed inbound messages, 401 at upgrade as a fatal typed error; no reconnection.
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import type { z } from 'zod';
import { redact } from '../redact.js';
import { CloudSocketAuthError, CloudSocketError } from './errors.js';
import { ErrorBodySchema } from './protocol.js';

export interface SocketEventMap<In> {
  /** A text frame that parsed as JSON and matched the inbound schema. */
  message: [In];
  /** A frame that did not: kept out of `message` so consumers only see typed values. */
  invalid: [raw: string, reason: string];
  /** The socket closed (by either side). Emitted exactly once. */
  close: [code: number, reason: string];
  /** A transport error after open; a `close` follows. Only emitted when someone listens. */
  error: [Error];
}

export interface OpenSocketOptions<S extends z.ZodType> {
  /** ws(s) address without the key, e.g. `wss://host/api/core/speechlab/asr`. */
  url: string;
  apiKey: string;
  inbound: S;
  signal?: AbortSignal;
  /** Fail with a non-fatal CloudSocketError when the upgrade takes longer. Default 10 s. */
  connectTimeoutMs?: number;
}

/** Adds `api_key` to the query; the result is a secret and must only be passed to `new WebSocket`. */
export function withApiKey(url: string, apiKey: string): string {
  const u = new URL(url);
  u.searchParams.set('api_key', apiKey);
  return u.toString();
}

/** The address as it may appear in logs and errors: `api_key` value replaced. */
export function redactUrl(url: string): string {
  return redact(url);
}

/**
 * An open socket. Incoming frames wait until a `message` listener is attached, so nothing sent right
 * after the upgrade is lost. It never reconnects: after `close` it is done, and the owner (a stream actor) decides
 * whether to open a new one. `close()` or the open signal's abort ends it.
 */
export class CloudSocket<Out, In> extends EventEmitter<SocketEventMap<In>> {
  /** `WS <path>`: the address without host or query, for errors and logs. */
  readonly endpoint: string;
  /** Full address with the key redacted. */
  readonly url: string;
  private closed = false;

  constructor(
    private readonly ws: WebSocket,
    url: string,
    inbound: z.ZodType<In>,
    signal?: AbortSignal,
  ) {
    super();
    this.url = redactUrl(url);
    this.endpoint = endpointOf(url);
    ws.on('message', (data, isBinary) => {
      const raw = isBinary ? '' : data.toString();
      if (isBinary) return void this.emit('invalid', '<binary>', 'binary frames are not part of the protocol');
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        return void this.emit('invalid', raw, 'not JSON');
      }
      const parsed = inbound.safeParse(json);
      if (parsed.success) this.emit('message', parsed.data);
      else this.emit('invalid', raw, parsed.error.issues[0]?.message ?? 'does not match the protocol');
    });
    ws.on('error', (err) => {
      if (this.listenerCount('error') > 0) this.emit('error', new CloudSocketError(this.endpoint, redact(err.message), { cause: err }));
    });
    ws.on('close', (code, reason) => {
      if (this.closed) return;
      this.closed = true;
      signal?.removeEventListener('abort', onAbort);
      this.emit('close', code, redact(reason.toString()));
    });
    const onAbort = () => this.close(1000, 'aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    // A server may send right after the upgrade (the `connection` message), before the caller had a
    // chance to subscribe: hold incoming frames until the first `message` listener is attached.
    ws.pause();
    const onListener = (event: string | symbol) => {
      if (event !== 'message') return;
      (this as EventEmitter).off('newListener', onListener);
      process.nextTick(() => ws.resume());
    };
    (this as EventEmitter).on('newListener', onListener);
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Bytes queued in the socket but not yet sent: a pipeline uses it to apply its drop policy. */
  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** Sends one message as a JSON text frame. Returns false (and sends nothing) when not open. */
  send(message: Out): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** Closes politely; the peer gets `code`. Idempotent. */
  close(code = 1000, reason = ''): void {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else this.ws.close(code, reason);
  }

  /** Drops the connection at once (no closing handshake). */
  terminate(): void {
    this.ws.terminate();
  }
}

/** `WS /path` of a ws(s) address. */
export function endpointOf(url: string): string {
  try {
    return `WS ${new URL(url).pathname}`;
  } catch {
    return 'WS ?';
  }
}

/** Reads an upgrade rejection's body (the spec's `{error}`), at most 4 KiB. */
function readRejection(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    res.on('data', (d: Buffer) => {
      if (size < 4096) parts.push(d);
      size += d.length;
    });
    res.on('end', () => resolve(Buffer.concat(parts).toString('utf8').slice(0, 4096)));
    res.on('error', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

/**
 * Opens a socket and resolves once the upgrade succeeded. Rejects with:
 * - CloudSocketAuthError (fatal) on 401, with the server's `{error}` text, e.g. `Missing API key...`;
 * - CloudSocketError fatal on other 4xx, non-fatal on 5xx, timeouts and network errors;
 * - the signal's reason when aborted.
 */
export function openSocket<Out, S extends z.ZodType>(options: OpenSocketOptions<S>): Promise<CloudSocket<Out, z.infer<S>>> {
  const { url, apiKey, inbound, signal } = options;
  const endpoint = endpointOf(url);
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const ws = new WebSocket(withApiKey(url, apiKey), { handshakeTimeout: options.connectTimeoutMs ?? 10_000 });
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      ws.removeAllListeners();
      ws.on('error', () => undefined);
      ws.terminate();
      reject(err);
    };
    const onAbort = () => fail(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    ws.once('unexpected-response', (req, res) => {
      const status = res.statusCode ?? 0;
      void readRejection(res).then((body) => {
        req.destroy();
        let text = body.trim() || `HTTP ${status} at upgrade`;
        const parsed = (() => {
          try {
            return ErrorBodySchema.safeParse(JSON.parse(body));
          } catch {
            return undefined;
          }
        })();
        if (parsed?.success) text = parsed.data.error;
        if (status === 401) fail(new CloudSocketAuthError(endpoint, text));
        else fail(new CloudSocketError(endpoint, text, { status, fatal: status >= 400 && status < 500 && status !== 408 && status !== 429 }));
      });
    });
    ws.once('error', (err) => fail(new CloudSocketError(endpoint, `connect failed: ${redact(err.message)}`, { cause: err })));
    ws.once('open', () => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      ws.removeAllListeners('error');
      ws.removeAllListeners('unexpected-response');
      resolve(new CloudSocket<Out, z.infer<S>>(ws, withApiKey(url, apiKey), inbound as unknown as z.ZodType<z.infer<S>>, signal));
    });
  });
}
