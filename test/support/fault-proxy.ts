// A scripted faulty peer: a loopback proxy in front of a real hosted-API service that cuts sockets, injects garbage, errors, info restarts, refusals and chat failures, and counts what reached the service.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { handleHttp, type ChatFailure, type HttpCounts } from './fault-proxy-http.js';

/*
 * Answers are real: every request and socket message goes to the service behind (usually the local
 * service of src/service started in-process on port 0); the proxy only adds the faults it is told
 * to. With no fault set it is a transparent proxy (chat with SSE, speech synthesis, the three
 * sockets), which a soak test can put in front of a whole agent.
 */

export type SocketKind = 'speechlab' | 'speechb' | 'vlm';

/** What to break. Every field is optional; `{}` breaks nothing. Durations in ms. */
export interface FaultScript {
  /** Cut every socket this long after it opens: both sides dropped at the TCP level (the client sees 1006). */
  cutAfterMs?: number;
  /** Cut every socket after a random time, uniform in [minMs, maxMs]. */
  randomCut?: { minMs: number; maxMs: number };
  /** Every this long, send the client a frame that is not protocol (text that is not JSON, or binary, in turn), then an `error` event. */
  garbageEveryMs?: number;
  /** Every this long, send `speechlab` clients `{type: 'info', message: 'Recognition session restarted', clientId}`. */
  infoEveryMs?: number;
  /** Refuse every socket upgrade with this status and `{error}` body (e.g. 401, `Invalid API key: ...`). */
  rejectUpgrade?: { status: number; error: string };
  /** At the client's first message: send an `error` event, then close with 1008 and this reason; nothing is forwarded. */
  policyCloseOnFirstMessage?: string;
  /** The next chat completions get these answers, in order, one per request (503, then 429 with Retry-After, ...). */
  chatFailures?: ChatFailure[];
  /** Chat completions wait this long before being forwarded. */
  chatDelayMs?: number;
  /** Socket faults apply to these kinds only (default: all three). */
  sockets?: SocketKind[];
}

export interface SocketCounts {
  /** Upgrades the service accepted through the proxy. */
  opened: number;
  /** Sockets the proxy cut. */
  cut: number;
  /** Sockets that ended, by whichever side. */
  closed: number;
}

export interface FaultProxyStats {
  upgrades: number;
  /** Upgrades refused by the script (the service never saw them). */
  refused: number;
  /** Upgrades the service itself refused (status relayed to the client). */
  serviceRefused: number;
  sockets: Record<SocketKind, SocketCounts>;
  /** Decoded PCM bytes forwarded to the service on recognition sockets. */
  audioBytes: number;
  audioMessages: number;
  /** Vision frames forwarded to the service, and their decoded JPEG bytes. */
  frames: number;
  frameBytes: number;
  /** Messages from the service forwarded to clients. */
  serviceMessages: number;
  injected: { garbage: number; errors: number; info: number; policyCloses: number };
  http: HttpCounts;
}

/** One socket's life as the proxy saw it (for reconnect-gap figures). */
export interface SocketRecord {
  kind: SocketKind;
  id: number;
  /** When the client's upgrade request reached the proxy (then the proxy opened its own to the service). */
  requestedAt: number;
  /** When the service accepted and the client's upgrade completed. */
  openedAt: number;
  /** When it ended (for a cut: when the proxy cut it); `cut` when the proxy cut it. */
  closedAt?: number;
  cut?: boolean;
}

export interface FaultProxyOptions {
  /** The service's HTTP base URL, e.g. `http://127.0.0.1:PORT`; its sockets are at the same host. */
  target: string;
  script?: FaultScript;
  /** Random source of random cuts (tests pass a seeded one: `seededRandom`). */
  random?: () => number;
  /** Keep every forwarded audio byte, in order, for byte-exact assertions (`audio()`). */
  recordAudio?: boolean;
  /** Clock of the socket records; default Date.now. */
  now?: () => number;
}

export interface FaultProxy {
  /** HTTP base URL: use it as the service address. */
  url: string;
  /** WebSocket base URL; the second ASR and the vision sockets are `${wsUrl}/asr` and `${wsUrl}/vlm` when the target is the local service. */
  wsUrl: string;
  /** Replaces the script (sockets already open keep their cut timer; chat faults apply at once). */
  script(script: FaultScript): void;
  stats(): FaultProxyStats;
  /** Every socket, in the order they opened (at most the last 100,000). */
  sockets(): SocketRecord[];
  /** Forwarded audio, in order (only with `recordAudio`). */
  audio(): Buffer;
  /** Cuts every open socket now. */
  cutAll(): void;
  /** Resolves when `cond()` holds (checked after everything the proxy counts), rejects after `ms`. */
  until(cond: () => boolean, what: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** A small seeded PRNG (mulberry32): the same seed gives the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Which socket a path is: `/vlm` vision, `/asr` the second recognizer, anything else `speechlab`. */
export function socketKindOf(path: string): SocketKind {
  const p = path.replace(/\/+$/, '');
  if (p.endsWith('/vlm')) return 'vlm';
  if (p.endsWith('/asr') && !p.includes('speechlab')) return 'speechb';
  return 'speechlab';
}

const MAX_RECORDS = 100_000;

/** Starts the proxy on 127.0.0.1 and a free port. */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  const wsTarget = `${target.protocol === 'https:' ? 'wss:' : 'ws:'}//${target.host}`;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  let script: FaultScript = { ...options.script };
  const chat = { chatFailures: [...(script.chatFailures ?? [])], chatDelayMs: script.chatDelayMs ?? 0 };
  const counts = (): SocketCounts => ({ opened: 0, cut: 0, closed: 0 });
  const stats: FaultProxyStats = {
    upgrades: 0,
    refused: 0,
    serviceRefused: 0,
    sockets: { speechlab: counts(), speechb: counts(), vlm: counts() },
    audioBytes: 0,
    audioMessages: 0,
    frames: 0,
    frameBytes: 0,
    serviceMessages: 0,
    injected: { garbage: 0, errors: 0, info: 0, policyCloses: 0 },
    http: { requests: 0, chat: 0, chatFailed: 0, tts: 0, statuses: {} },
  };
  const records: SocketRecord[] = [];
  const audio: Buffer[] = [];
  const open = new Set<{ cut(): void; end(): void }>();
  const tcp = new Set<Socket>();
  let waiters: Array<() => void> = [];
  let nextId = 1;
  const changed = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const applies = (kind: SocketKind) => !script.sockets || script.sockets.includes(kind);

  const server = createServer((req, res) => handleHttp(req, res, target, chat, stats.http, changed));
  server.on('connection', (s) => {
    tcp.add(s);
    s.on('close', () => tcp.delete(s));
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });

  const refuse = (socket: Duplex, status: number, body: string) =>
    socket.end(
      `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    const requestedAt = now();
    stats.upgrades += 1;
    const kind = socketKindOf(new URL(req.url ?? '/', 'http://proxy').pathname);
    const reject = applies(kind) ? script.rejectUpgrade : undefined;
    if (reject) {
      stats.refused += 1;
      refuse(socket, reject.status, JSON.stringify({ error: reject.error }));
      changed();
      return;
    }
    const headers: Record<string, string> = {};
    for (const h of ['authorization', 'x-api-key']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h] as string;
    const upstream = new WebSocket(wsTarget + (req.url ?? '/'), { headers, maxPayload: 64 * 1024 * 1024 });
    const early: Array<[RawData, boolean]> = [];
    let settled = false;
    upstream.on('message', (data, isBinary) => void early.push([data, isBinary]));
    upstream.once('unexpected-response', (request, answer) => {
      settled = true;
      stats.serviceRefused += 1;
      const parts: Buffer[] = [];
      answer.on('data', (d: Buffer) => parts.push(d));
      answer.on('end', () => {
        request.destroy();
        refuse(socket, answer.statusCode ?? 502, Buffer.concat(parts).toString('utf8'));
        changed();
      });
    });
    upstream.on('error', (err) => {
      if (settled) return;
      settled = true;
      refuse(socket, 502, JSON.stringify({ error: `fault proxy: service unreachable: ${err.message}` }));
    });
    // A client that gives up while the service is still answering takes the upstream socket with it.
    const gaveUp = () => {
      if (!settled) upstream.terminate();
      settled = true;
    };
    socket.once('close', gaveUp);
    upstream.once('open', () => {
      if (settled) return upstream.terminate();
      settled = true;
      socket.off('close', gaveUp);
      wss.handleUpgrade(req, socket, head, (client) => pipe(kind, client, upstream, early, requestedAt));
    });
  });

  const pipe = (kind: SocketKind, client: WebSocket, upstream: WebSocket, early: Array<[RawData, boolean]>, requestedAt: number) => {
    const record: SocketRecord = { kind, id: nextId++, requestedAt, openedAt: now() };
    records.push(record);
    if (records.length > MAX_RECORDS) records.shift();
    stats.sockets[kind].opened += 1;
    const faulty = applies(kind);
    const timers: NodeJS.Timeout[] = [];
    let clientId: string | undefined;
    let first = true;
    let ended = false;
    const errorEvent = (message: string) => (kind === 'speechlab' ? { type: 'error', message, clientId } : { error: message });
    const toClient = (data: RawData | string, isBinary = false) => {
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
    };
    const handle = {
      cut() {
        if (ended) return;
        record.cut = true;
        record.closedAt = now();
        stats.sockets[kind].cut += 1;
        client.terminate();
        upstream.terminate();
      },
      end() {
        if (ended) return;
        ended = true;
        record.closedAt ??= now();
        stats.sockets[kind].closed += 1;
        for (const t of timers) clearTimeout(t);
        open.delete(handle);
        changed();
      },
    };
    open.add(handle);

    const fromService = (data: RawData, isBinary: boolean) => {
      if (!isBinary && kind === 'speechlab' && clientId === undefined) {
        try {
          const m = JSON.parse(data.toString()) as { clientId?: unknown };
          if (typeof m.clientId === 'string') clientId = m.clientId;
        } catch {
          // not JSON: forwarded as it is
        }
      }
      stats.serviceMessages += 1;
      toClient(data, isBinary);
    };
    upstream.removeAllListeners('message');
    upstream.on('message', fromService);
    for (const [data, isBinary] of early.splice(0)) fromService(data, isBinary);

    client.on('message', (data, isBinary) => {
      if (first && faulty && script.policyCloseOnFirstMessage !== undefined) {
        first = false;
        stats.injected.policyCloses += 1;
        toClient(JSON.stringify(errorEvent(`Recognition error: ${script.policyCloseOnFirstMessage}`)));
        client.close(1008, script.policyCloseOnFirstMessage.slice(0, 120));
        upstream.close(1000, 'client gone');
        return;
      }
      first = false;
      if (upstream.readyState !== WebSocket.OPEN) return;
      upstream.send(data, { binary: isBinary });
      if (!isBinary) count(kind, data.toString());
      changed();
    });

    const closeWith = (ws: WebSocket, code: number, reason: Buffer) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (code === 1005 || code === 1006 || code < 1000) ws.terminate();
      else ws.close(code, reason.toString().slice(0, 120));
    };
    upstream.on('close', (code, reason) => {
      closeWith(client, code, reason);
      handle.end();
    });
    client.on('close', (code, reason) => {
      closeWith(upstream, code, reason);
      handle.end();
    });
    upstream.on('error', () => undefined);
    client.on('error', () => undefined);

    if (!faulty) return changed();
    const cutIn = script.cutAfterMs ?? (script.randomCut ? script.randomCut.minMs + random() * (script.randomCut.maxMs - script.randomCut.minMs) : undefined);
    if (cutIn !== undefined) timers.push(setTimeout(() => handle.cut(), cutIn));
    if (script.garbageEveryMs) {
      let n = 0;
      timers.push(
        setInterval(() => {
          if (n++ % 2 === 0) toClient('{not json at all');
          else toClient(Buffer.from([0xde, 0xad, 0xbe, 0xef]), true);
          stats.injected.garbage += 1;
          toClient(JSON.stringify(errorEvent('Recognition error: injected by the fault proxy')));
          stats.injected.errors += 1;
          changed();
        }, script.garbageEveryMs),
      );
    }
    if (script.infoEveryMs && kind === 'speechlab') {
      timers.push(
        setInterval(() => {
          toClient(JSON.stringify({ type: 'info', message: 'Recognition session restarted', clientId }));
          stats.injected.info += 1;
          changed();
        }, script.infoEveryMs),
      );
    }
    changed();
  };

  /** Counts audio bytes or frames of one client message (as the service will decode them). */
  const count = (kind: SocketKind, text: string) => {
    let m: { audio?: unknown; frame?: unknown };
    try {
      m = JSON.parse(text) as typeof m;
    } catch {
      return;
    }
    if (kind === 'vlm' && typeof m.frame === 'string') {
      stats.frames += 1;
      stats.frameBytes += Buffer.byteLength(m.frame, 'base64');
    } else if (kind !== 'vlm' && typeof m.audio === 'string') {
      const pcm = Buffer.from(m.audio, 'base64');
      stats.audioMessages += 1;
      stats.audioBytes += pcm.length;
      if (options.recordAudio) audio.push(pcm);
    }
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    script(next) {
      script = { ...next };
      chat.chatFailures = [...(next.chatFailures ?? [])];
      chat.chatDelayMs = next.chatDelayMs ?? 0;
    },
    stats: () => structuredClone(stats),
    sockets: () => records.map((r) => ({ ...r })),
    audio: () => Buffer.concat(audio),
    cutAll() {
      for (const h of [...open]) h.cut();
    },
    until(cond, what, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`fault proxy: timed out waiting for ${what}`)), ms);
        const check = () => {
          if (cond()) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
    async close() {
      for (const h of [...open]) h.cut();
      wss.close();
      for (const s of tcp) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
