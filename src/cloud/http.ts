// HTTP transport of the hosted-API client: auth headers, typed errors from status and `{error}` bodies, retries, abort.
import type { z } from 'zod';
import { redact } from '../redact.js';
import { CloudNetworkError, CloudProtocolError, httpErrorFrom, isAbortError } from './errors.js';
import { DEFAULT_RETRY, parseRetryAfter, withRetry, type RetryOptions } from './retry.js';

/** How a request authenticates: an API key or JWT as Bearer, or an API key in `x-api-key`. */
export type Credential = { kind: 'bearer'; token: string } | { kind: 'x-api-key'; token: string } | { kind: 'none' };

export interface HttpRequest {
  method: 'GET' | 'POST';
  /** Path relative to the base URL, starting with `/`. */
  path: string;
  /** Sent as JSON when present. */
  body?: unknown;
  credential: Credential;
  signal?: AbortSignal;
  accept?: string;
  /** Overrides the client's retry policy for this request. */
  retry?: RetryOptions;
}

export interface HttpClientOptions {
  /** http(s) base address, e.g. `https://api.example`; no trailing slash needed. */
  baseUrl: string;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /** Called once per failed attempt that will be retried (already redacted by the logger). */
  onRetry?: RetryOptions['onRetry'];
}

/** Headers for a credential. The value never goes anywhere but the request. */
export function authHeaders(credential: Credential): Record<string, string> {
  if (credential.kind === 'bearer') return { authorization: `Bearer ${credential.token}` };
  if (credential.kind === 'x-api-key') return { 'x-api-key': credential.token };
  return {};
}

/** One HTTP client per base address. Stateless apart from its options; safe to share. */
export class CloudHttp {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly retry: RetryOptions;

  constructor(options: HttpClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? fetch;
    const retry = options.retry ?? DEFAULT_RETRY;
    this.retry = options.onRetry ? { ...retry, onRetry: options.onRetry } : retry;
  }

  /** `METHOD /path` as used in errors and logs (no host, no query, nothing secret). */
  static endpoint(req: Pick<HttpRequest, 'method' | 'path'>): string {
    return `${req.method} ${redact(req.path.split('?')[0] ?? req.path)}`;
  }

  /**
   * Sends the request, retrying only what the retry policy allows, and resolves with a 2xx Response whose
   * body is unread. Any other status throws the typed CloudHttpError of that status. Once this resolves,
   * nothing about the request is retried any more: a body that breaks later is the caller's error.
   */
  async send(req: HttpRequest): Promise<Response> {
    const endpoint = CloudHttp.endpoint(req);
    const policy = req.retry ?? this.retry;
    return withRetry(() => this.attempt(req, endpoint), policy, req.signal);
  }

  /** Sends the request and returns its JSON body validated by `schema`. */
  async json<S extends z.ZodType>(req: HttpRequest, schema: S): Promise<z.infer<S>> {
    const endpoint = CloudHttp.endpoint(req);
    const res = await this.send({ accept: 'application/json', ...req });
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      if (isAbortError(err) || req.signal?.aborted) throw req.signal?.reason ?? err;
      throw new CloudNetworkError(endpoint, false, err);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new CloudProtocolError(endpoint, `response is not JSON: ${text.slice(0, 120)}`);
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new CloudProtocolError(endpoint, `unexpected response shape: ${issues}`);
    }
    return parsed.data;
  }

  private async attempt(req: HttpRequest, endpoint: string): Promise<Response> {
    const headers: Record<string, string> = { ...authHeaders(req.credential) };
    if (req.accept) headers.accept = req.accept;
    const init: RequestInit = { method: req.method, headers };
    if (req.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(req.body);
    }
    if (req.signal) init.signal = req.signal;
    let res: Response;
    try {
      res = await this.fetchImpl(this.baseUrl + req.path, init);
    } catch (err) {
      if (isAbortError(err) || req.signal?.aborted) throw req.signal?.reason ?? err;
      // fetch rejects before resolving headers: not a byte of the response arrived.
      throw new CloudNetworkError(endpoint, true, err);
    }
    if (res.ok) return res;
    let body = '';
    try {
      body = await res.text();
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason;
      body = '';
    }
    throw httpErrorFrom(res.status, endpoint, body, parseRetryAfter(res.headers.get('retry-after')));
  }
}
