// Issue 20 rows 1, 2 and 6 on loopback: a 1 MiB chat, an 8000x8000 JPEG and large TTS requests stall no one and stay within a memory ceiling.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../fixtures/service/ws-client.js';
import { descendantNames, max, memoryDuring, probeDuring, startServiceProcess } from '../helpers/service-process.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

/** The bound of the issue: a well-behaved client's request answers within this while an attack runs. */
const PROBE_BOUND_MS = 500;

/** A JPEG made by ffmpeg from a lavfi source, as base64. */
function jpeg(source: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'abuse-jpeg-'));
  try {
    const out = join(dir, 'f.jpg');
    const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', source, '-frames:v', '1', '-q:v', '10', out]);
    if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr}`);
    return readFileSync(out).toString('base64');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('row 1: 1 MiB chat messages of "voice" repeated freeze nothing', async (t) => {
  const svc = await startServiceProcess();
  t.teardown(() => svc.stop());
  const body = JSON.stringify({ model: 'gen-5-nano', messages: [{ role: 'user', content: 'voice'.repeat(209_000) }] });
  t.ok(body.length > 1_000_000 && body.length < 1024 * 1024, `the reported attack: ${body.length} bytes`);
  const chat = () =>
    fetch(`${svc.url}/api/core/provider_a/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.keys.attacker}`, 'content-type': 'application/json' },
      body,
    }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as { choices?: Array<{ message: { content: string } }> },
    }));
  const { result, latencies } = await probeDuring(svc.url, svc.keys.probe!, async () => {
    const answers = [];
    for (let round = 0; round < 5; round++) answers.push(...(await Promise.all([chat(), chat(), chat(), chat()])));
    return answers;
  });
  t.same([...new Set(result.map((a) => a.status))], [200], 'every 1 MiB request is answered');
  t.equal(result[0]!.body.choices?.[0]?.message.content, '', 'nothing was heard: the model idles');
  t.ok(max(latencies) < PROBE_BOUND_MS, `probe from another key: max ${max(latencies).toFixed(0)} ms over ${latencies.length} probes`);
});

t.test('row 2: an 8000x8000 JPEG is refused from its header; large legal frames decode off the event loop', async (t) => {
  const svc = await startServiceProcess();
  t.teardown(() => svc.stop());
  const huge = jpeg('color=c=gray:s=8000x8000');
  const large = jpeg('testsrc2=s=3840x2160');
  t.ok(huge.length < 2 * 1024 * 1024, `the huge frame fits one message (${huge.length} base64 characters)`);
  const c = await connect(`${svc.vlmWsUrl}?api_key=${svc.keys.attacker}`);
  t.teardown(() => c.ws.close());
  const errors = () => c.messages.filter((m) => 'error' in m);
  const replies = () => c.messages.filter((m) => 'vlm_reply' in m);

  const { result, latencies } = await probeDuring(svc.url, svc.keys.probe!, () =>
    memoryDuring(svc.pid, async () => {
      for (let i = 0; i < 20; i++) c.send({ timestamp: Date.now() / 1000, frame: huge });
      await c.next(() => errors().length >= 20, 30_000);
      // Frames within the limit are analysed (at a reduced scale, in the worker), one reply a second at most.
      for (let i = 0; i < 3; i++) {
        c.send({ timestamp: Date.now() / 1000, frame: large });
        await c.next(() => replies().length >= i + 1, 30_000);
      }
    }),
  );
  t.same(errors()[0], { error: 'Invalid frame: 8000x8000 is larger than the limit (at most 4096 pixels a side and 8388608 pixels in all)' });
  t.equal(errors().length, 20, 'each oversized frame is one error, and nothing else');
  t.match(replies()[0], { vlm_reply: /^I see (no faces|\d+ faces?)/ }, 'a 3840x2160 frame is described');
  t.equal(c.ws.readyState, c.ws.OPEN, 'the session continues');
  t.ok(max(latencies) < PROBE_BOUND_MS, `probe from another key: max ${max(latencies).toFixed(0)} ms over ${latencies.length} probes`);
  // Ceilings: the service itself does not grow (no decode in it); with its vision worker (a second
  // Node process with OpenCV, here also carrying the test runner's TypeScript loader) it stays under
  // 1 GB in all, against the reported 3.6 GB.
  t.ok(result.peakMb - result.idleMb < 100, `service peak RSS ${result.peakMb.toFixed(0)} MB (idle ${result.idleMb.toFixed(0)} MB): under idle + 100 MB`);
  t.ok(result.totalPeakMb < 1024, `service + vision worker peak ${result.totalPeakMb.toFixed(0)} MB: under 1 GB (was 3.6 GB)`);
});

t.test('row 6: ten 5000-character wav_48000 syntheses at speed 0.5 at once', async (t) => {
  const svc = await startServiceProcess();
  t.teardown(() => svc.stop());
  const text = 'The quick brown fox jumps over the lazy dog while the robot keeps watch. '.repeat(70).slice(0, 5000);
  let processes = 0;
  /** Sends one request and reads the answer as it arrives, keeping only its size, head and tail. */
  const tts = () =>
    new Promise<{ status: number; bytes: number; length: number; head: string; tail: string }>((resolve, reject) => {
      const req = request(
        `${svc.url}/speechlab/tts`,
        { method: 'POST', headers: { 'x-api-key': svc.keys.attacker!, 'content-type': 'application/json' } },
        (res) => {
          let bytes = 0;
          let head = '';
          let tail = '';
          res.on('data', (d: Buffer) => {
            bytes += d.length;
            if (head.length < 5200) head += d.toString('latin1').slice(0, 5200 - head.length);
            tail = (tail + d.toString('latin1')).slice(-100);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, length: Number(res.headers['content-length'] ?? -1), head, tail }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ input: text, response_format: 'wav_48000', speed: 0.5 }));
    });

  const sampler = setInterval(() => (processes = Math.max(processes, descendantNames(svc.pid).filter((n) => n === 'espeak-ng' || n === 'ffmpeg').length)), 20);
  const { result, latencies } = await probeDuring(svc.url, svc.keys.probe!, () => memoryDuring(svc.pid, () => Promise.all(Array.from({ length: 10 }, tts))));
  clearInterval(sampler);
  const answers = result.result;
  const ok = answers.filter((a) => a.status === 200);
  t.ok(ok.length >= 1, `${ok.length} syntheses answered`);
  t.same(
    [...new Set(answers.map((a) => a.status))].sort(),
    ok.length === 10 ? [200] : [200, 429],
    'the rest are refused at once with 429, not queued without end',
  );
  for (const a of ok) {
    t.equal(a.bytes, a.length, 'the whole JSON body arrived, as long as announced');
    t.match(a.head, /^\{"text":"The quick brown fox[^"]*","response":"UklGR/, 'JSON with base64 WAV audio');
    t.match(a.tail, /","format":"wav_48000"\}$/);
  }
  t.ok(ok[0]!.bytes > 20_000_000, `each answer is large (${(ok[0]!.bytes / 1e6).toFixed(0)} MB): it is streamed, not held`);
  t.ok(processes <= 4, `at most 2 syntheses (espeak-ng + ffmpeg each) at once: saw ${processes} processes`);
  t.ok(max(latencies) < PROBE_BOUND_MS, `probe from another key: max ${max(latencies).toFixed(0)} ms over ${latencies.length} probes`);
  t.ok(
    result.peakMb - result.idleMb < 100,
    `service peak RSS ${result.peakMb.toFixed(0)} MB (idle ${result.idleMb.toFixed(0)} MB): under idle + 100 MB (was 1.84 GB)`,
  );
});

t.test('row 6: audio waiting for clients that do not read is bounded too', async (t) => {
  const svc = await startServiceProcess({ limits: { ttsPendingBytes: 1 } });
  t.teardown(() => svc.stop());
  // A client that asks for minutes of audio and never reads it: more than socket buffers hold, so it waits on disk, counted.
  const stalled = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    const req = request(
      `${svc.url}/speechlab/tts`,
      { method: 'POST', headers: { 'x-api-key': svc.keys.attacker!, 'content-type': 'application/json' } },
      (res) => {
        res.pause();
        resolve(res);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ input: 'This audio waits for a client that never reads it. '.repeat(40), response_format: 'wav_48000', speed: 0.5 }));
  });
  t.equal(stalled.statusCode, 200);
  const next = await fetch(`${svc.url}/speechlab/tts`, {
    method: 'POST',
    headers: { 'x-api-key': svc.keys.probe!, 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'hi' }),
  });
  t.equal(next.status, 503);
  t.match(await next.json(), { error: /^Service busy: \d+ MiB of synthesised audio is waiting for slow clients\. Retry later\.$/ });
  t.equal(next.headers.get('retry-after'), '1');
  stalled.destroy();
});
