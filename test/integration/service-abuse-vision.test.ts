// Issue 23 item 5 (vision) on loopback: a PNG decompression bomb and a 60,000-scan progressive JPEG are refused from their headers, and a swollen worker is replaced.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '../fixtures/service/ws-client.js';
import { descendants, probeDuring, startServiceProcess } from '../helpers/service-process.js';
import { manyScanJpeg, pngBomb } from '../support/bad-images.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const PROBE_BOUND_MS = 500;
const FLOOD = fileURLToPath(new URL('../fixtures/service/vision-flood.ts', import.meta.url));

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** Resident MB of the service's node children (its vision workers). */
function workerMb(pid: number): number {
  let kb = 0;
  for (const p of descendants(pid)) {
    try {
      if (readFileSync(`/proc/${p}/comm`, 'utf8').trim() !== 'node') continue;
      kb += Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return kb / 1024;
}

/** A JPEG made by ffmpeg from a lavfi source, written to a temporary file; returns its path and base64. */
function ffmpegJpeg(dir: string, source: string, q = 5): { file: string; base64: string } {
  const file = join(dir, `${source.replace(/\W/g, '_')}.jpg`);
  const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', source, '-frames:v', '1', '-q:v', String(q), file]);
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr}`);
  return { file, base64: readFileSync(file).toString('base64') };
}

t.test('a PNG decompression bomb is refused from its header; a decode that swells the worker does not keep the memory', async (t) => {
  const svc = await startServiceProcess();
  t.teardown(() => svc.stop());
  const bomb = pngBomb(4096, 2048);
  t.ok(bomb.length < 64 * 1024, `the bomb is ${bomb.length} bytes for 4096x2048 16-bit RGB (50 MB decoded)`);
  const c = await connect(`${svc.vlmWsUrl}?api_key=${svc.keys.attacker}`);
  t.teardown(() => c.ws.close());
  for (let i = 0; i < 5; i++) c.send({ timestamp: Date.now() / 1000, frame: bomb.toString('base64') });
  await c.next(() => c.messages.length >= 5, 30_000);
  t.same(
    c.messages,
    Array.from({ length: 5 }, () => ({
      error: 'Invalid frame: a 4096x2048 PNG is larger than the PNG limit (2073600 pixels in all; send JPEG for larger frames)',
    })),
  );
  t.equal(workerMb(svc.pid), 0, 'no worker was even started: nothing was decoded');
});

t.test('a worker over its memory bound is replaced; the next frame is analysed by a fresh one', async (t) => {
  // The old bound lets the bomb through to the decoder; the worker's memory bound must catch it.
  const svc = await startServiceProcess({ limits: { vlmMaxPngPixels: 8 * 1024 * 1024 } });
  t.teardown(() => svc.stop());
  const dir = mkdtempSync(join(tmpdir(), 'abuse-vision-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const small = ffmpegJpeg(dir, 'testsrc2=s=640x480');
  const c = await connect(`${svc.vlmWsUrl}?api_key=${svc.keys.attacker}`);
  t.teardown(() => c.ws.close());
  c.send({ timestamp: Date.now() / 1000, frame: small.base64 });
  await c.next((m) => 'vlm_reply' in m, 60_000);
  const idleMb = workerMb(svc.pid);
  t.ok(idleMb > 0, `the worker runs at ${idleMb.toFixed(0)} MB`);
  await svc.stop();

  // Same service, with the worker's bound a little above what it needs idle: the 4096x2048 decode passes it.
  const limit = Math.round((idleMb + 24) * 1024 * 1024);
  const svc2 = await startServiceProcess({ limits: { vlmMaxPngPixels: 8 * 1024 * 1024, vlmWorkerMemoryBytes: limit } });
  t.teardown(() => svc2.stop());
  const d = await connect(`${svc2.vlmWsUrl}?api_key=${svc2.keys.attacker}`);
  t.teardown(() => d.ws.close());
  d.send({ timestamp: Date.now() / 1000, frame: small.base64 });
  await d.next((m) => 'vlm_reply' in m, 60_000);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, workerMb(svc2.pid))), 10);
  t.teardown(() => clearInterval(sampler));
  d.send({ timestamp: Date.now() / 1000, frame: pngBomb(4096, 2048).toString('base64') });
  const answer = await d.next((m) => d.messages.indexOf(m) >= 1, 60_000);
  t.comment(`answer to the bomb: ${JSON.stringify(answer)}; worker peak ${peak.toFixed(0)} MB, bound ${(limit / 1048576).toFixed(0)} MB`);
  // Whether the watchdog killed it mid-frame or it finished first, the worker does not keep the memory.
  let after = workerMb(svc2.pid);
  for (let i = 0; i < 100 && after > limit / 1048576; i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = workerMb(svc2.pid);
  }
  clearInterval(sampler);
  t.ok(after <= limit / 1048576, `the worker's memory is back under its bound (${after.toFixed(0)} MB)`);
  await new Promise((r) => setTimeout(r, 1100));
  d.send({ timestamp: Date.now() / 1000, frame: small.base64 });
  await d.next((m) => d.messages.indexOf(m) >= 2 && 'vlm_reply' in m, 60_000);
  t.pass('the next frame is analysed');
});

t.test('a 60,000-scan progressive JPEG is refused from its markers; another user keeps getting replies', async (t) => {
  const svc = await startServiceProcess();
  t.teardown(() => svc.stop());
  const bomb = manyScanJpeg(60_000).toString('base64');
  t.ok(bomb.length < 2 * 1024 * 1024, `60,000 scans fit one message (${bomb.length} base64 characters)`);
  const dir = mkdtempSync(join(tmpdir(), 'abuse-vision-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const normal = ffmpegJpeg(dir, 'testsrc2=s=640x480');
  const attacker = await connect(`${svc.vlmWsUrl}?api_key=${svc.keys.attacker}`);
  const user = await connect(`${svc.vlmWsUrl}?api_key=${svc.keys.probe}`);
  t.teardown(() => {
    attacker.ws.close();
    user.ws.close();
  });
  const workers = new Set<number>();
  let frames = 0;
  const timer = setInterval(() => {
    attacker.send({ timestamp: Date.now() / 1000, frame: bomb });
    user.send({ timestamp: Date.now() / 1000, frame: normal.base64 });
    frames++;
    for (const p of descendants(svc.pid)) workers.add(p);
  }, 100);
  t.teardown(() => clearInterval(timer));
  await user.next(() => user.messages.filter((m) => 'vlm_reply' in m).length >= 3, 60_000);
  clearInterval(timer);
  t.comment(`the user had 3 replies after ${frames} frames (was 3 replies for 30 frames)`);
  t.ok(attacker.messages.length > 0, 'the attacker was answered');
  t.same(
    [...new Set(attacker.messages.map((m) => m.error))],
    ['Invalid frame: the JPEG has more than 100 scans (progressive passes); at most 100 are decoded'],
    'every bomb is refused, none analysed',
  );
  t.same(
    user.messages.filter((m) => !('vlm_reply' in m)),
    [],
    'the user gets only replies',
  );
  t.ok(workers.size <= 1, `one worker served the whole time, never killed (saw ${workers.size} worker processes)`);
});
