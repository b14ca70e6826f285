// Proves the vision socket of `cortexd cloud`: OpenCV descriptions of ffmpeg-generated JPEG frames (faces, motion), and its {error} frames.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startService } from '../../src/service/index.js';
import { connect } from '../fixtures/service/ws-client.js';

/** One 640x480 JPEG of ffmpeg's test pattern, optionally through a filter. */
function frame(filter?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-frame-'));
  try {
    const out = join(dir, 'f.jpg');
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=640x480:rate=1',
      ...(filter ? ['-vf', filter] : []),
      '-frames:v',
      '1',
      '-q:v',
      '5',
      out,
    ];
    const r = spawnSync('ffmpeg', args);
    if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr}`);
    return readFileSync(out).toString('base64');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('vision socket', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'v'.repeat(40), logger: pino({ level: 'silent' }) });
  t.teardown(() => svc.close());
  const { apiKey, info } = svc.admin.createApiKey('alice');
  const c = await connect(`${svc.vlmWsUrl}?api_key=${apiKey}`);
  const a = frame();
  const replies = () => c.messages.filter((m) => 'vlm_reply' in m);

  c.send({ timestamp: Date.now() / 1000, frame: a });
  t.same(await c.next(() => replies().length >= 1, 20000).then(() => replies()[0]), { vlm_reply: 'I see no faces. No motion information yet.' });
  c.send({ timestamp: Date.now() / 1000, frame: a });
  await c.next(() => replies().length >= 2, 20000);
  t.same(replies()[1], { vlm_reply: 'I see no faces. No motion.' }, 'the same frame again: no motion');
  c.send({ timestamp: Date.now() / 1000, frame: frame('negate') });
  await c.next(() => replies().length >= 3, 20000);
  t.match(replies()[2], { vlm_reply: /^I see no faces\. Strong motion \(\d+% of the view\)\.$/ });

  c.send({ frame: a });
  t.match(await c.next((m) => 'error' in m), { error: /^Invalid vision message: timestamp/ });
  c.ws.send('nope');
  t.same(await c.next((m) => m.error === 'Invalid vision message: not valid JSON'), { error: 'Invalid vision message: not valid JSON' });
  c.send({ timestamp: 1, frame: Buffer.from('not a jpeg').toString('base64') });
  t.match(await c.next((m) => String(m.error).startsWith('Invalid frame')), { error: /^Invalid frame: / });
  t.equal(c.ws.readyState, c.ws.OPEN, 'errors in frames do not end the session');
  t.same(svc.admin.usage(info.id), [], 'vision is not metered');
  c.ws.close();
});

t.test('frames larger than the message limit close the socket with 1009', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'w'.repeat(40), logger: pino({ level: 'silent' }), limits: { vlmMessageBytes: 10_000 } });
  t.teardown(() => svc.close());
  const c = await connect(`${svc.vlmWsUrl}?api_key=${svc.admin.createApiKey('bob').apiKey}`);
  c.send({ timestamp: 1, frame: 'A'.repeat(20_000) });
  t.equal((await c.closed).code, 1009);
});
