// Replays the provider stream corpus (test/fixtures/providers/) from a real HTTP server on loopback, cut into pieces where the test says.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One recorded shape: the bytes a provider streams, the same answer unstreamed, and what both mean. */
export interface ProviderFixture {
  name: string;
  provider: string;
  /** Where the shape comes from (documentation, issue tracker, server code). */
  source: string;
  content_type: string;
  bytes: Buffer;
  /** The non-streamed completion of the same answer; null for fixtures whose stream ends in an error. */
  whole: unknown;
  expect: { text?: string; calls?: Array<{ name: string; arguments: unknown; extra?: unknown }>; error?: string };
}

/** The corpus directory, found from here whether this runs from test/support or dist/test/support. */
export function fixtureDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'test', 'fixtures', 'providers');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('test/fixtures/providers not found above this file');
}

export function loadFixtures(dir = fixtureDir()): ProviderFixture[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const meta = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Omit<ProviderFixture, 'name' | 'bytes'> & { file: string };
      return { ...meta, name: f.replace(/\.json$/, ''), bytes: readFileSync(join(dir, meta.file)) };
    });
}

/** A deterministic sample of `n` cut points in 1..len-1 (every one when there are fewer), from `seed`. */
export function sampleCuts(len: number, n: number, seed: number): number[] {
  if (len - 1 <= n) return Array.from({ length: Math.max(0, len - 1) }, (_, i) => i + 1);
  let x = seed >>> 0 || 1;
  const picked = new Set<number>();
  while (picked.size < n) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    picked.add(1 + ((x >>> 0) % (len - 1)));
  }
  return [...picked].sort((a, b) => a - b);
}

export interface ReplayServer {
  /** `http://127.0.0.1:PORT`: LocalLLM's base_url is this + `/v1`; the hosted client's base_url is this. */
  url: string;
  /** The fixture served next, and where its bytes are cut (each piece written after the previous one left). */
  serve(fixture: ProviderFixture, cuts?: number[] | 'every-byte'): void;
  /** Bodies of the chat requests received, in order. */
  requests: Array<{ stream: boolean; body: Record<string, unknown> }>;
  /** When the first byte of the first tool call was written (ms, performance.now()), per request. */
  toolByteAt: number[];
  close(): Promise<void>;
}

const pause = () => new Promise<void>((r) => setImmediate(r));

/**
 * Answers every POST to a path ending in `/chat/completions`: a streamed request with the fixture's
 * bytes (its content type; written piece by piece at the cuts), an unstreamed one with its `whole`
 * completion (or, for an error fixture, a 200 JSON body with the provider's error). Anything else 404.
 */
export async function startReplayServer(): Promise<ReplayServer> {
  let fixture: ProviderFixture | undefined;
  let cuts: number[] | 'every-byte' = [];
  const requests: ReplayServer['requests'] = [];
  const toolByteAt: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions') || !fixture) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        const stream = body.stream === true;
        requests.push({ stream, body });
        if (!stream) {
          const answer = fixture.whole ?? { error: { message: fixture.expect.error ?? 'error' } };
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
          return;
        }
        const bytes = fixture.bytes;
        const edges = cuts === 'every-byte' ? Array.from({ length: bytes.length - 1 }, (_, i) => i + 1) : cuts;
        const toolAt = bytes.indexOf('"tool_calls":[{');
        res.writeHead(200, { 'content-type': fixture.content_type, 'cache-control': 'no-cache' });
        let from = 0;
        let marked = false;
        for (const edge of [...edges, bytes.length]) {
          if (edge <= from) continue;
          if (!marked && toolAt >= 0 && edge > toolAt) {
            toolByteAt.push(performance.now());
            marked = true;
          }
          if (res.destroyed) return;
          res.write(bytes.subarray(from, edge));
          from = edge;
          await pause();
        }
        res.end();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    toolByteAt,
    serve(f, c = []) {
      fixture = f;
      cuts = c;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
