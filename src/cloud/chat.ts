// Chat completions client: validates a request before sending, then returns the completion or an SSE stream of deltas and usage.
import { checkModel, isProvider, MODEL_PREFIXES, type Provider } from './catalog.js';
import { CloudValidationError } from './errors.js';
import { CloudHttp, type Credential } from './http.js';
import { ChatCompletionRequestSchema, ChatCompletionResponseSchema, PATHS, type ChatCompletionRequest, type ChatCompletionResponse } from './protocol.js';
import { answerEvents, collectChatStream, type ChatStreamEvent, type CollectedChat, wholeAnswerEvents } from './sse.js';

export { checkModel };

/** Every problem of a request, as `field: message` lines; empty when it may be sent. */
export function validateChatRequest(provider: string, request: unknown, opts: { catalog?: boolean } = {}): string[] {
  const issues: string[] = [];
  const parsed = ChatCompletionRequestSchema.safeParse(request);
  if (!parsed.success) {
    for (const i of parsed.error.issues) issues.push(`${i.path.join('.') || '(request)'}: ${i.message}`);
  }
  if (opts.catalog !== false) {
    const model = (request as { model?: unknown } | null)?.model;
    const problem = checkModel(provider, typeof model === 'string' ? model : '');
    if (problem && (typeof model === 'string' || !isProvider(provider))) issues.push(problem);
  }
  return issues;
}

export interface ChatCallOptions {
  signal?: AbortSignal;
}

/** An open completion stream: iterate for events, or `collect()` them into one result. */
export interface ChatStream extends AsyncIterable<ChatStreamEvent> {
  collect(onText?: (text: string) => void): Promise<CollectedChat>;
}

export interface ChatClientOptions {
  http: CloudHttp;
  apiKey: string;
  /**
   * Check provider and model prefix against the catalog before sending (default true). Off lets a newer
   * server's models through; the server still answers 404 for what it does not support.
   */
  catalogCheck?: boolean;
}

/** `POST /api/core/{provider}/chat/completions`, with `Authorization: Bearer <API key>`. */
export class ChatClient {
  private readonly http: CloudHttp;
  private readonly credential: Credential;
  private readonly catalogCheck: boolean;

  constructor(options: ChatClientOptions) {
    this.http = options.http;
    this.credential = { kind: 'bearer', token: options.apiKey };
    this.catalogCheck = options.catalogCheck ?? true;
  }

  private validated(provider: Provider | string, request: ChatCompletionRequest, stream: boolean): ChatCompletionRequest {
    const endpoint = CloudHttp.endpoint({ method: 'POST', path: PATHS.chat(provider) });
    if (!/^[a-z0-9_]+$/.test(provider)) throw new CloudValidationError(endpoint, [`provider: invalid path segment`]);
    const issues = validateChatRequest(provider, request, { catalog: this.catalogCheck });
    if (issues.length) throw new CloudValidationError(endpoint, issues);
    const body: ChatCompletionRequest = { ...request };
    if (stream) body.stream = true;
    else delete body.stream;
    return body;
  }

  /** A whole completion. Retried per the client's policy (429, 503 unreachable, reset before any byte). */
  async create(provider: Provider | string, request: ChatCompletionRequest, options: ChatCallOptions = {}): Promise<ChatCompletionResponse> {
    const body = this.validated(provider, request, false);
    const req = { method: 'POST' as const, path: PATHS.chat(provider), body, credential: this.credential };
    return this.http.json(options.signal ? { ...req, signal: options.signal } : req, ChatCompletionResponseSchema);
  }

  /**
   * The events of one answer, streamed or not, read leniently: what a model plugin uses. Not streamed,
   * the JSON answer is read by the same tolerant reader as the stream's chunks (extra fields, reasoning,
   * provider metadata, a JSON error with status 200), unlike `create()`, which holds the server to the spec.
   */
  async events(
    provider: Provider | string,
    request: ChatCompletionRequest,
    options: ChatCallOptions & { stream: boolean },
  ): Promise<AsyncIterable<ChatStreamEvent>> {
    if (options.stream) return this.stream(provider, request, options);
    const body = this.validated(provider, request, false);
    const path = PATHS.chat(provider);
    const endpoint = CloudHttp.endpoint({ method: 'POST', path });
    const req = { method: 'POST' as const, path, body, credential: this.credential };
    const res = await this.http.send(options.signal ? { ...req, signal: options.signal } : req);
    return wholeAnswerEvents(res, endpoint);
  }

  /**
   * A streamed completion (`stream: true`). Resolves once the response headers arrived (until then the
   * retry policy applies); from then on nothing is retried and a broken stream throws CloudStreamError,
   * a provider's error event ModelProviderError, an unreadable one CloudProtocolError (see sse.ts).
   * Aborting `signal` ends the iteration with the signal's reason and closes the connection.
   */
  async stream(provider: Provider | string, request: ChatCompletionRequest, options: ChatCallOptions = {}): Promise<ChatStream> {
    const body = this.validated(provider, request, true);
    const path = PATHS.chat(provider);
    const endpoint = CloudHttp.endpoint({ method: 'POST', path });
    const req = { method: 'POST' as const, path, body, credential: this.credential, accept: 'text/event-stream, application/json' };
    const res = await this.http.send(options.signal ? { ...req, signal: options.signal } : req);
    // An event stream, or what some servers send instead: a whole JSON answer, or a JSON error with status 200.
    const events = answerEvents(res, endpoint, options.signal);
    return {
      [Symbol.asyncIterator]: () => events,
      collect: (onText) => collectChatStream(events, onText),
    };
  }
}

export { MODEL_PREFIXES };
