// Issue 23 item 5 (vision) on loopback: 16 sockets of 3840x2160 frames from 8 keys leave chat fast and a viewer of another key served, with the worker's memory bounded.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '../fixtures/service/ws-client.js';
import { descendants, probeDuring, startServiceProcess } from '../helpers/service-process.js';
import { tsLoaderArgs } from '../helpers/ts-loader.js';

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

t.test('16 sockets of 3840x2160 frames from 8 keys: chat stays fast, keys take turns, another user is served', async (t) => {
  const users: Record<string, { plan: string }> = { probe: { plan: 'enterprise' }, viewer: { plan: 'enterprise' } };
  for (let i = 0; i < 8; i++) users[`a${i}`] = { plan: 'enterprise' };
  const svc = await startServiceProcess({ users });
  t.teardown(() => svc.stop());
  const dir = mkdtempSync(join(tmpdir(), 'abuse-vision-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const big = ffmpegJpeg(dir, 'testsrc2=s=3840x2160', 3);
  const normal = ffmpegJpeg(dir, 'testsrc2=s=640x480');
  const spec = {
    url: svc.vlmWsUrl,
    keys: Array.from({ length: 8 }, (_, i) => svc.keys[`a${i}`]!),
    socketsPerKey: 2,
    frameFile: big.file,
    ms: 90_000,
  };
  const viewer = await connect(`${svc.vlmWsUrl}?api_key=${svc.keys.viewer}`);
  t.teardown(() => viewer.ws.close());
  // The worker is started (and OpenCV loaded) before the attack, as on a service in use.
  viewer.send({ timestamp: Date.now() / 1000, frame: normal.base64 });
  await viewer.next((m) => 'vlm_reply' in m, 60_000);
  const before = viewer.messages.length;
  let peak = 0;
  let viewerReplies = 0;
  // The flood runs until the viewer of a ninth key has had a reply (its turn comes after one frame of each other key; a hang guard of 90 s, not a deadline).
  const attack = () =>
    new Promise<{ sockets: number; sent: number; replies: number; errors: Record<string, number> }>((resolve, reject) => {
      const child = spawn(process.execPath, [...tsLoaderArgs, FLOOD, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      let frames: NodeJS.Timeout | undefined;
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (frames || !out.startsWith('open\n')) return;
        frames = setInterval(() => {
          viewer.send({ timestamp: Date.now() / 1000, frame: normal.base64 });
          peak = Math.max(peak, workerMb(svc.pid));
          viewerReplies = viewer.messages.slice(before).filter((m) => 'vlm_reply' in m).length;
          if (viewerReplies >= 1 && !child.killed) child.kill('SIGTERM');
        }, 200);
      });
      child.on('exit', (code) => {
        clearInterval(frames);
        const last = out.trim().split('\n').at(-1)!;
        return code === 0 && last.startsWith('{') ? resolve(JSON.parse(last)) : reject(new Error(`attacker exited ${code}: ${out}`));
      });
    });
  const { result, latencies } = await probeDuring(svc.url, svc.keys.probe!, attack, { minProbes: 20 });
  t.comment(`attack: ${JSON.stringify(result)}; probe median ${median(latencies).toFixed(0)} ms over ${latencies.length}; worker peak ${peak.toFixed(0)} MB`);
  t.equal(result.sockets, 16, '8 keys x 2 sockets open');
  t.ok(viewerReplies >= 1, `the viewer of a ninth key got ${viewerReplies} reply while the flood ran`);
  t.ok(median(latencies) < PROBE_BOUND_MS, `chat probe median ${median(latencies).toFixed(0)} ms under ${PROBE_BOUND_MS} ms (was p50 800 ms)`);
  t.ok(peak < 512, `vision worker peak ${peak.toFixed(0)} MB, under its 512 MB bound`);
});
