// Issue 23 items 5 and 6 on loopback: nested JSON is refused before parsing, a trickled socket frame and an idle socket are closed, and 3,000 slow-body connections cost a bounded number of descriptors.
import t from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { probeDuring, probeOnce, startServiceProcess } from '../helpers/service-process.js';
import { tsLoaderArgs } from '../helpers/ts-loader.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const PROBE_BOUND_MS = 500;
const SLOW = fileURLToPath(new URL('../fixtures/service/slow-connections.ts', import.meta.url));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const fds = (pid: number): number => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
};

/** Opens a raw WebSocket by hand; resolves with the socket (paused) and what came after the 101. */
function rawWebSocket(url: string): Promise<{ s: Socket; received: () => Buffer; closed: Promise<void> }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = tcpConnect(Number(u.port), u.hostname, () =>
      s.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const closed = new Promise<void>((r) => s.once('close', () => r()));
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (upgraded) return;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!buf.subarray(0, 12).toString().startsWith('HTTP/1.1 101')) return reject(new Error(buf.toString().split('\r\n')[0]));
      upgraded = true;
      buf = buf.subarray(end + 4);
      resolve({ s, received: () => buf, closed });
    });
  });
}

/** The code and reason of the first close frame in `b` (server frames are not masked). */
function closeFrame(b: Buffer): { code: number; reason: string } | undefined {
  for (let i = 0; i + 1 < b.length; ) {
    const op = b[i]! & 0x0f;
    let len = b[i + 1]! & 0x7f;
    let at = i + 2;
    if (len === 126) {
      len = b.readUInt16BE(at);
      at += 2;
    }
    if (op === 0x8) return { code: b.readUInt16BE(at), reason: b.toString('utf8', at + 2, at + len) };
    i = at + len;
  }
  return undefined;
}

t.test('eight 1 MiB bodies of [[[...]]] at once are refused from their bytes; chat stays fast', async (t) => {
  const svc = await startServiceProcess();
  t.teardown(() => svc.stop());
  const body = `${'['.repeat(524_288)}${']'.repeat(524_288)}`;
  const post = (text: string) =>
    fetch(`${svc.url}/api/core/provider_a/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.keys.attacker}`, 'content-type': 'application/json' },
      body: text,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown }));
  const { result, latencies } = await probeDuring(
    svc.url,
    svc.keys.probe!,
    async () => {
      const answers = [];
      for (let round = 0; round < 5; round++) answers.push(...(await Promise.all(Array.from({ length: 8 }, () => post(body)))));
      return answers;
    },
    { minProbes: 10 },
  );
  t.same(
    [...new Set(result.map((a) => JSON.stringify(a)))],
    [JSON.stringify({ status: 400, body: { error: 'Invalid JSON: nested deeper than 64 levels (at byte 64)' } })],
    '40 bodies, each the same 400',
  );
  t.ok(median(latencies) < PROBE_BOUND_MS, `probe median ${median(latencies).toFixed(0)} ms over ${latencies.length} (was p50 0.8-1.05 s)`);

  const many = JSON.stringify({ model: 'gen-5-nano', messages: Array.from({ length: 10_001 }, () => ({})) });
  t.match(await post(many), { status: 413, body: { error: /^Invalid JSON: more than 10000 objects and arrays \(at byte \d+\)$/ } });
  const bad = JSON.stringify({ model: 'gen-5-nano', messages: Array.from({ length: 9_000 }, () => ({})) });
  t.same(await post(bad), { status: 400, body: { error: 'Invalid request: messages.0.role: expected one of system, user, assistant, tool' } });
  const tts = await fetch(`${svc.url}/speechlab/tts`, {
    method: 'POST',
    headers: { 'x-api-key': svc.keys.attacker!, 'content-type': 'application/json' },
    body: `{"input": ${'['.repeat(100)}`,
  });
  t.same(
    [tts.status, await tts.json()],
    [400, { error: 'Missing or invalid JSON in request: nested deeper than 64 levels (at byte 73)' }],
    'speech routes keep their own text',
  );
});

t.test('a trickled socket frame is closed 1008 and an idle socket 1001', async (t) => {
  const svc = await startServiceProcess({ limits: { wsMessageTimeoutMs: 1000, wsIdleTimeoutMs: 1500 } });
  t.teardown(() => svc.stop());
  for (const url of [`${svc.asrWsUrl}?api_key=${svc.keys.attacker}`, `${svc.vlmWsUrl}?api_key=${svc.keys.attacker}`]) {
    const path = new URL(url).pathname;
    // A masked text frame that announces 1000 bytes, then one byte every 200 ms.
    const trickle = await rawWebSocket(url);
    trickle.s.write(Buffer.from([0x81, 0x80 | 126, 0x03, 0xe8, 1, 2, 3, 4]));
    const timer = setInterval(() => trickle.s.writable && trickle.s.write(Buffer.from([0x20])), 200);
    t.teardown(() => clearInterval(timer));
    await Promise.race([trickle.closed, new Promise((_, reject) => setTimeout(() => reject(new Error(`${path}: still open after 30 s`)), 30_000))]);
    clearInterval(timer);
    t.same(
      closeFrame(trickle.received()),
      { code: 1008, reason: 'message timeout: a message was not received whole within 1000 ms' },
      `${path}: trickled frame closed (was held 330 s)`,
    );

    const idle = await rawWebSocket(url);
    await Promise.race([idle.closed, new Promise((_, reject) => setTimeout(() => reject(new Error(`${path}: idle socket open after 30 s`)), 30_000))]);
    t.same(closeFrame(idle.received()), { code: 1001, reason: 'idle timeout: nothing received for 1500 ms' }, `${path}: idle socket closed`);
  }
});

t.test('3,000 slow-body connections from one peer: at most 256 held, each until the body deadline; descriptors bounded', async (t) => {
  const svc = await startServiceProcess({ limits: { bodyTimeoutMs: 2000 } });
  t.teardown(() => svc.stop());
  await probeOnce(svc.url, svc.keys.probe!);
  const idleFds = fds(svc.pid);
  const spec = { port: Number(new URL(svc.url).port), count: 3000, headers: `Authorization: Bearer ${svc.jwts.attacker}\r\n`, closeWithinMs: 30_000 };
  let peakFds = 0;
  const sampler = setInterval(() => (peakFds = Math.max(peakFds, fds(svc.pid))), 20);
  const result = await new Promise<{ statuses: Record<string, number>; bodies: string[]; slowestCloseMs: number; stillOpen: number }>((resolve, reject) => {
    const child = spawn(process.execPath, [...tsLoaderArgs, SLOW, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`attacker exited ${code}`))));
  });
  clearInterval(sampler);
  t.comment(JSON.stringify({ ...result, idleFds, peakFds }));
  t.equal(result.stillOpen, 0, `every connection was closed by the service (slowest after ${result.slowestCloseMs} ms; was 330 s)`);
  t.same(
    Object.keys(result.statuses).filter((s) => !['0', '408', '429'].includes(s)),
    [],
    'each was answered 408 or 429, or closed',
  );
  t.ok((result.statuses['408'] ?? 0) > 0, `${result.statuses['408']} waited for their bodies (as many as 256 at a time), then got 408`);
  t.ok((result.statuses['429'] ?? 0) > 0, `${result.statuses['429']} were refused at accept`);
  t.ok(
    // The peer of a local connection is its user (src/local-peer.ts): this test's own.
    result.bodies.includes(
      JSON.stringify({ error: `Too many connections from local user ${process.getuid?.()}: the limit is 256 open at once. Close some first.` }),
    ),
    'with a 429 that says why',
  );
  // Held at most: the cap, 64 refusals waiting out their second, and 256 connections waiting for the next
  // read of the socket table that says which local user owns them (src/local-peer.ts).
  t.ok(
    peakFds - idleFds <= 256 + 64 + 256 + 8,
    `service descriptors peaked at ${peakFds} (idle ${idleFds}): at most the cap, 64 refusals and 256 owner look-ups above idle (was 3,026)`,
  );
  t.ok((await probeOnce(svc.url, svc.keys.probe!)) >= 0, 'the service answers once the attack ends');
});
