// Proves the VLM stream actor: replies as vlm.reply events, latest-frame-wins on a busy socket, no frames across reconnects, fatal 401.
import t from 'tap';
import { SimulatedClock } from 'xstate';
import { Subject, VirtualTimeScheduler, map } from 'rxjs';
import { startVlmStream, vlmEvents } from '../../actors/streams/vlm-stream.js';
import { FrameSender } from '../../actors/streams/frame-sender.js';
import type { StreamLink } from '../../src/cloud/link.js';
import type { EncodedFrame, Frame } from '../../src/pipelines/jpeg.js';
import { CloudSocketAuthError } from '../../src/cloud/errors.js';
import { FakeLink as FakeVisionLink } from '../support/fake-link.js';

/** Frame sequence numbers (the first 4 bytes of each test frame) with their timestamps. */
const seqs = (l: FakeVisionLink) => l.frames.map((f) => ({ seq: f.jpeg.readUInt32BE(0), ts: f.ts }));

const tick = () => new Promise((r) => setImmediate(r));

/** A frame whose "JPEG" is its sequence number, so the peer can tell which frame it got. */
const frame = (seq: number, at: number): Frame => ({ mat: undefined as never, capturedAt: at, seq });
const fakeEncode = map((f: Frame): EncodedFrame => {
  const jpeg = Buffer.alloc(4);
  jpeg.writeUInt32BE(f.seq);
  return { jpeg, capturedAt: f.capturedAt, seq: f.seq, width: 640, height: 480 };
});

function setup(connect?: (n: number) => Promise<StreamLink>) {
  const clock = new SimulatedClock();
  const links: FakeVisionLink[] = [];
  let calls = 0;
  const frames = new Subject<Frame>();
  const scheduler = new VirtualTimeScheduler();
  const stream = startVlmStream({
    connect: async () => {
      calls += 1;
      if (connect) return connect(calls);
      const l = new FakeVisionLink();
      links.push(l);
      return l;
    },
    frames$: frames,
    fps: 1000,
    encode: fakeEncode,
    sender: { scheduler },
    clock,
    now: () => clock.now(),
    timing: { backoffInitialMs: 100, backoffMaxMs: 1000, connectTimeoutMs: 500, keepaliveMs: 1000 },
    random: () => 1,
  });
  const events: Array<{ type: string; [k: string]: unknown }> = [];
  for (const type of ['vlm.reply', 'vlm.error', 'vlm.state', 'vlm.stats', 'vlm.failed', 'vlm.closed']) stream.actor.on(type, (e) => events.push(e as never));
  return { clock, links, frames, stream, events, scheduler, calls: () => calls };
}

t.test('frames reach the socket with their capture time; replies and errors become vlm.* events', async (t) => {
  const { links, frames, stream, events } = setup();
  await tick();
  t.ok(stream.actor.getSnapshot().hasTag('streaming'));
  frames.next(frame(1, 1_700_000_000_000));
  t.same(seqs(links[0]!), [{ seq: 1, ts: 1_700_000_000 }], 'timestamp in Unix seconds');
  links[0]!.server({ type: 'message', message: { vlm_reply: 'I see 1 face (center). No motion.' } });
  links[0]!.server({ type: 'message', message: { error: 'Invalid frame: frame is not a decodable image' } });
  t.same(
    events.filter((e) => e.type === 'vlm.reply' || e.type === 'vlm.error').map((e) => e.text ?? e.message),
    ['I see 1 face (center). No motion.', 'Invalid frame: frame is not a decodable image'],
  );
  t.ok(stream.actor.getSnapshot().hasTag('streaming'), 'an error frame keeps the session');
  stream.stop();
});

t.test('a busy socket gets the newest frame when it drains, never a queue', async (t) => {
  const { links, frames, stream, scheduler } = setup();
  await tick();
  const link = links[0]!;
  frames.next(frame(1, 1000));
  link.buffered = 50_000; // frame 1 still being written
  for (let i = 2; i <= 30; i++) frames.next(frame(i, 1000 + i));
  t.same(
    seqs(link).map((s) => s.seq),
    [1],
    'nothing sent while the socket is busy',
  );
  link.buffered = 0;
  scheduler.flush(); // the waiting frame re-checks the socket's buffer every 10 ms
  t.same(
    seqs(link).map((s) => s.seq),
    [1, 30],
    'the newest frame, once',
  );
  t.equal(stream.stats().replaced, 28);
  stream.stop();
});

t.test('frames are not kept across a reconnect; sending resumes on the new socket; state events count frames', async (t) => {
  const { clock, links, frames, stream, events } = setup();
  await tick();
  links[0]!.server({ type: 'close', code: 1006, reason: '' }); // before any reply: a quick failure, backs off
  frames.next(frame(5, 5000));
  t.match(events.at(-1), { type: 'vlm.state', state: 'backingOff', delay_ms: 100, attempt: 2, frames_sent: 0, frames_dropped: 0 });
  clock.increment(100);
  await tick();
  t.equal(links.length, 2);
  frames.next(frame(6, 6000));
  t.same(
    seqs(links[1]!).map((s) => s.seq),
    [6],
  );
  t.equal(stream.stats().sent, 1);
  t.equal(stream.stats().skippedDisconnected, 1, 'the frame seen while down was skipped before encoding');
  clock.increment(1000);
  t.match(
    events.filter((e) => e.type === 'vlm.stats'),
    [{ state: 'streaming', frames_sent: 1, frames_dropped: 1 }],
  );
  clock.increment(3000);
  t.equal(events.filter((e) => e.type === 'vlm.stats').length, 1, 'no stats event while nothing changes');
  stream.stop();
  t.match(events.at(-1), { type: 'vlm.state', state: 'stopped', frames_sent: 1, frames_dropped: 1 });
});

t.test('401 at connect stops the stream with the server text; no retry', async (t) => {
  const { clock, stream, events, calls } = setup(async () => {
    throw new CloudSocketAuthError('WS /vlm', 'Invalid API key: revoked');
  });
  await tick();
  clock.increment(120_000);
  await tick();
  t.equal(calls(), 1);
  t.equal(stream.actor.getSnapshot().value, 'failed');
  t.match(
    events.find((e) => e.type === 'vlm.failed'),
    { reason: /Invalid API key: revoked/ },
  );
});

t.test('FrameSender without a socket drops and counts; vlmEvents ignores unknown messages', async (t) => {
  const sender = new FrameSender();
  sender.offer({ jpeg: Buffer.alloc(4), capturedAt: 0, seq: 0, width: 1, height: 1 });
  t.equal(sender.stats().droppedDisconnected, 1);
  t.same(vlmEvents({ something: 1 }), []);
  t.same(vlmEvents(null), []);
});
