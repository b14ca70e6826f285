// The HTTP half of the fault proxy: forwards every request to the real service unchanged (SSE and audio streamed as they come), or answers a chat with a scripted error or after a delay.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

/** A scripted chat answer: this status and `{error}` body, with Retry-After when given. */
export interface ChatFailure {
  status: number;
  error: string;
  /** Retry-After header, in seconds. */
  retryAfterS?: number;
}

export interface HttpFaults {
  /** Chat completions: the next requests get these answers, one per request, in order; later ones are forwarded. */
  chatFailures: ChatFailure[];
  /** Chat completions wait this long before being forwarded (a slow model). */
  chatDelayMs: number;
}

export interface HttpCounts {
  /** Requests received. */
  requests: number;
  /** Chat completion requests received (answered with a fault or forwarded). */
  chat: number;
  /** Chat requests answered with a scripted failure. */
  chatFailed: number;
  /** Speech synthesis requests received. */
  tts: number;
  /** Answers the service sent back through the proxy, by status. */
  statuses: Record<string, number>;
}

const CHAT_PATH = /^\/api\/core\/[^/]+\/chat\/completions\/?$/;
const TTS_PATH = /^\/(speechlab\/tts(\/audio\/speech)?|api\/core\/speechb\/tts)\/?$/;

/** Headers that describe one hop and must not be forwarded. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/**
 * Handles one request: a scripted chat failure is answered after the request body was read (so the
 * connection stays usable); otherwise the request is forwarded to `target` and the answer streamed
 * back as it arrives, status and headers unchanged. `onSettled` runs when the answer is complete.
 */
export function handleHttp(req: IncomingMessage, res: ServerResponse, target: URL, faults: HttpFaults, counts: HttpCounts, onSettled: () => void): void {
  counts.requests += 1;
  const path = (req.url ?? '/').split('?')[0]!;
  const isChat = req.method === 'POST' && CHAT_PATH.test(path);
  if (TTS_PATH.test(path)) counts.tts += 1;
  res.once('close', onSettled);
  if (isChat) {
    counts.chat += 1;
    const failure = faults.chatFailures.shift();
    if (failure) {
      counts.chatFailed += 1;
      req.resume();
      req.once('end', () =>
        sendJson(res, failure.status, { error: failure.error }, failure.retryAfterS !== undefined ? { 'retry-after': String(failure.retryAfterS) } : {}),
      );
      return;
    }
    if (faults.chatDelayMs > 0) {
      req.pause();
      const timer = setTimeout(() => forward(req, res, target, counts), faults.chatDelayMs);
      res.once('close', () => clearTimeout(timer));
      return;
    }
  }
  forward(req, res, target, counts);
}

function forward(req: IncomingMessage, res: ServerResponse, target: URL, counts: HttpCounts): void {
  if (res.destroyed) return;
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
  headers.host = target.host;
  const upstream = httpRequest(
    { protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (answer: IncomingMessage) => {
      const key = String(answer.statusCode ?? 0);
      counts.statuses[key] = (counts.statuses[key] ?? 0) + 1;
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(answer.statusCode ?? 502, out);
      // An SSE stream or audio is written on as it arrives, never collected.
      res.flushHeaders();
      answer.on('data', (chunk: Buffer) => res.write(chunk));
      answer.on('end', () => res.end());
      answer.on('error', () => res.destroy());
    },
  );
  upstream.on('error', (err) => {
    if (!res.headersSent) sendJson(res, 502, { error: `fault proxy: service unreachable: ${err.message}` });
    else res.destroy();
  });
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
  req.resume();
}
