// Proves the service's bounded fair pool (turns by key, refusals at once, aborts), the image header reader (sizes and scan counts without decoding, no crash on junk), JSON bounds before parsing, and worker flags.
import t from 'tap';
import { FairPool } from '../../src/service/pool.js';
import { oversize, readImageHeader, reductionFor, type FrameBounds } from '../../src/service/backends/image-header.js';
import { checkJsonLimits } from '../../src/service/http/json-limits.js';

/** A job that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { open, job: () => done };
}

t.test('the pool runs at most N, refuses overflow at once, and gives keys turns', async (t) => {
  const pool = new FairPool({ name: 'test', running: 2, queued: 3, perKeyRunning: 1, perKeyTotal: 3 });
  const order: string[] = [];
  const gates = new Map<string, ReturnType<typeof gate>>();
  const run = (key: string, id: string) => {
    const g = gate();
    gates.set(id, g);
    return pool.run(key, async () => {
      order.push(id);
      await g.job();
    });
  };
  const a1 = run('a', 'a1');
  const a2 = run('a', 'a2');
  const a3 = run('a', 'a3');
  await t.rejects(run('a', 'a4'), { name: 'KeyBusyError', status: 429 }, 'a fourth job of one key is refused (its share is 3)');
  const b1 = run('b', 'b1');
  const c1 = run('c', 'c1');
  t.same(pool.stats, { running: 2, waiting: 3 });
  await t.rejects(run('d', 'd1'), { name: 'PoolBusyError', status: 503 }, 'the queue is full for everyone');
  t.same(order, ['a1', 'b1'], 'a key runs one job at a time, so b starts beside a');
  gates.get('a1')!.open();
  await a1;
  t.same(order, ['a1', 'b1', 'c1'], 'c, waiting once, goes before a second job of a');
  gates.get('b1')!.open();
  gates.get('c1')!.open();
  await Promise.all([b1, c1]);
  t.same(order, ['a1', 'b1', 'c1', 'a2']);
  gates.get('a2')!.open();
  await a2;
  gates.get('a3')!.open();
  await a3;
  t.same(pool.stats, { running: 0, waiting: 0 });

  const blocker = gate();
  const busy = [pool.run('x', blocker.job), pool.run('y', blocker.job)];
  const abort = new AbortController();
  const waiting = pool.run('z', async () => 'ran', abort.signal);
  abort.abort(new Error('client left'));
  await t.rejects(waiting, { message: 'client left' }, 'an aborted waiting job leaves the queue');
  t.same(pool.stats, { running: 2, waiting: 0 });
  blocker.open();
  await Promise.all(busy);
});

t.test('held slots (live decoders) count against the total, per key apart from jobs, and go to waiting jobs first', async (t) => {
  const pool = new FairPool({ name: 'test', running: 2, queued: 4, perKeyRunning: 1, perKeyTotal: 4 });
  const a = pool.tryHold('a');
  t.ok(a, 'a free slot is held at once');
  t.equal(pool.tryHold('a'), undefined, 'a key holds at most perKeyRunning slots');
  const g = gate();
  const aJob = pool.run('a', g.job);
  t.same(pool.stats, { running: 2, waiting: 0 }, "a key's job runs beside its held slot");
  t.equal(pool.tryHold('b'), undefined, 'no slot is held past the total');
  t.notOk(pool.canStartNow('b'), 'nor does a job start past it');
  const order: string[] = [];
  const bJob = pool.run('b', async () => void order.push('b'));
  t.same(pool.stats, { running: 2, waiting: 1 });
  a!();
  await bJob;
  t.same(order, ['b'], 'a released slot goes to the waiting job');
  a!();
  t.same(pool.stats, { running: 1, waiting: 0 }, 'release is idempotent');
  const b = pool.tryHold('b');
  t.ok(b, 'the freed slot can be held again');
  g.open();
  await aJob;
  b!();
  t.same(pool.stats, { running: 0, waiting: 0 });
});

/**
 * The start of a baseline JPEG of `w`x`h` as encoders write it: SOI, a JFIF APP0 segment, a
 * quantisation table, then the frame header (SOF0). A real ffmpeg JPEG is read in the abuse tests.
 */
function jpeg(w: number, h: number): Buffer {
  const app0 = [0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00];
  const dqt = [0xff, 0xdb, 0x00, 0x43, 0x00, ...Array.from({ length: 64 }, () => 1)];
  const sof = [0xff, 0xc0, 0x00, 0x11, 0x08, h >> 8, h & 255, w >> 8, w & 255, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01];
  return Buffer.from([0xff, 0xd8, ...app0, 0xff, ...dqt, ...sof, 0xff, 0xda, 0x00, 0x02]);
}
/** A PNG signature and IHDR chunk of `w`x`h`. */
function png(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(w, 8);
  ihdr.writeUInt32BE(h, 12);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]);
}

t.test('image headers: sizes of JPEG and PNG without decoding; junk is a reason, not a crash', async (t) => {
  t.same(readImageHeader(jpeg(640, 480)), { format: 'jpeg', width: 640, height: 480, scans: 1 });
  t.same(readImageHeader(jpeg(8000, 8000)), { format: 'jpeg', width: 8000, height: 8000, scans: 1 });
  t.same(readImageHeader(png(33, 17)), { format: 'png', width: 33, height: 17, scans: 1 });
  t.equal(readImageHeader(Buffer.from('not a jpeg')), 'not a JPEG or PNG image');
  t.equal(readImageHeader(jpeg(640, 480).subarray(0, 30)), 'JPEG header ends before its size');
  t.equal(readImageHeader(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2])), 'JPEG has no frame header before its image data');
  t.equal(readImageHeader(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0])), 'JPEG header is corrupt');
  // Segment lengths that point anywhere never read past the buffer.
  let answered = 0;
  for (let i = 0; i < 2000; i++) {
    const junk = Buffer.from([0xff, 0xd8, ...Array.from({ length: 64 }, () => Math.floor(Math.random() * 256))]);
    const r = readImageHeader(junk);
    if (typeof r === 'string' || (r.width >= 0 && r.height > 0)) answered++;
  }
  t.equal(answered, 2000, '2000 random headers: each a reason or a size, none a crash');
  const b: FrameBounds = { maxSide: 4096, maxPixels: 8 * 1024 * 1024, maxPngPixels: 1920 * 1080, maxJpegScans: 100 };
  t.equal(
    oversize({ format: 'jpeg', width: 8000, height: 8000, scans: 1 }, b),
    '8000x8000 is larger than the limit (at most 4096 pixels a side and 8388608 pixels in all)',
  );
  t.equal(oversize({ format: 'jpeg', width: 3840, height: 2160, scans: 1 }, b), undefined);
  t.equal(
    oversize({ format: 'jpeg', width: 4096, height: 4096, scans: 1 }, b),
    '4096x4096 is larger than the limit (at most 4096 pixels a side and 8388608 pixels in all)',
    'the pixel limit counts too',
  );
  t.equal(oversize({ format: 'png', width: 1920, height: 1080, scans: 1 }, b), undefined, 'a 1080p PNG is decoded');
  t.equal(
    oversize({ format: 'png', width: 4096, height: 2048, scans: 1 }, b),
    'a 4096x2048 PNG is larger than the PNG limit (2073600 pixels in all; send JPEG for larger frames)',
    'a PNG is decoded whole: its bound is lower',
  );
  t.equal(
    oversize({ format: 'jpeg', width: 640, height: 480, scans: 101 }, b),
    'the JPEG has more than 100 scans (progressive passes); at most 100 are decoded',
  );
  t.same(
    [640, 1280, 1281, 2560, 3840, 4096].map((w) => reductionFor({ format: 'jpeg', width: w, height: 480, scans: 1 })),
    [1, 1, 2, 2, 4, 4],
  );
  t.equal(reductionFor({ format: 'png', width: 4000, height: 480, scans: 1 }), 1, 'PNG has no reduced decoding');
});

/** A progressive-looking JPEG of `scans` scans: each an SOS header and entropy data with byte stuffing and restart markers, as a decoder walks them. */
function scanned(scans: number, stray = false): Buffer {
  const head = jpeg(640, 480).subarray(0, -4);
  const scan = Buffer.from([0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x3f, 0x00, 0x12, 0xff, 0x00, 0x34, 0xff, 0xd0, 0x56, 0xff, 0xff, 0x00]);
  const parts = [head];
  for (let i = 0; i < scans; i++) parts.push(scan, stray && i === 0 ? Buffer.from([0x00, 0x11]) : Buffer.alloc(0));
  parts.push(Buffer.from([0xff, 0xd9]));
  return Buffer.concat(parts);
}

t.test('JPEG scans are counted through their entropy-coded data, stopping past the bound', async (t) => {
  t.match(readImageHeader(scanned(1)), { format: 'jpeg', width: 640, height: 480, scans: 1 });
  t.match(readImageHeader(scanned(10)), { scans: 10 }, 'stuffed 0xFF00 bytes and restart markers are data, not scans');
  t.match(readImageHeader(scanned(10, true)), { scans: 10 }, 'stray bytes between segments are skipped as a decoder skips them');
  t.match(readImageHeader(scanned(60_000), 100), { scans: 101 }, '60,000 scans: counting stops at the 101st');
  t.match(readImageHeader(scanned(60_000), 1_000_000), { scans: 60_000 }, 'and counts them all when asked');
});

t.test('JSON bounds are checked on the bytes before parsing', async (t) => {
  const limits = { depth: 64, containers: 10_000 };
  const nested = Buffer.from(`${'['.repeat(524_288)}${']'.repeat(524_288)}`);
  t.same(checkJsonLimits(nested, limits), { status: 400, message: 'nested deeper than 64 levels (at byte 64)' }, 'a megabyte of [[[ stops at byte 64');
  t.equal(checkJsonLimits(Buffer.from(`${'['.repeat(64)}${']'.repeat(64)}`), limits), undefined, '64 levels are fine');
  t.equal(
    checkJsonLimits(Buffer.from(JSON.stringify({ s: '[[[[{{{{'.repeat(100), e: 'a\\"[[[' })), limits),
    undefined,
    'brackets inside strings and escaped quotes do not count',
  );
  const afterBackslash = Buffer.from(`${JSON.stringify({ a: 'ends in a backslash \\' }).slice(0, -1)},"b":${'['.repeat(70)}`);
  t.same(
    checkJsonLimits(afterBackslash, limits),
    { status: 400, message: `nested deeper than 64 levels (at byte ${afterBackslash.indexOf('[') + 63})` },
    'a string ending in an escaped backslash ends there',
  );
  const wide = Buffer.from(JSON.stringify({ messages: Array.from({ length: 10_001 }, () => ({})) }));
  t.same(checkJsonLimits(wide, limits), { status: 413, message: `more than 10000 objects and arrays (at byte ${wide.indexOf('{}') + 3 * 9_998})` });
  const fine = Buffer.from(JSON.stringify({ messages: Array.from({ length: 3000 }, () => ({ role: 'tool', content: 'x' })) }));
  t.equal(checkJsonLimits(fine, limits), undefined, '3000 messages pass');
});

t.test('a vision worker inherits loader flags only, never a script or a debugger port', async (t) => {
  const { workerExecArgv } = await import('../../src/service/vision-pool.js');
  t.same(workerExecArgv(['--input-type=module', '-e', 'startService()', '--inspect=9229']), []);
  t.same(workerExecArgv(['--import=file:///x/loader.mjs', '--enable-source-maps', '--require', './r.cjs', '--max-old-space-size=64']), [
    '--import=file:///x/loader.mjs',
    '--enable-source-maps',
    '--require',
    './r.cjs',
  ]);
  t.same(workerExecArgv(['--import', 'tsx', '--eval', 'x']), ['--import', 'tsx']);
});
