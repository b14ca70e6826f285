// A recording file: channels with JSON schemas, chunks closed every second, rotation by size, a file cut short read up to its cut, and the decision diff of replay.
import t from 'tap';
import { mkdtempSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McapIndexedReader } from '@mcap/core';
import { FileHandleReadable } from '@mcap/nodejs';
import { decompressHandlers } from '../../src/record/compression.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { cameraChannel, eventChannel, eventMessage, frameMessage } from '../../src/record/channels.js';
import { decisionsOf, diffDecisions, formatDiff } from '../../src/record/decisions.js';
import { readRecording, summarise } from '../../src/record/reader.js';
import { Recorder } from '../../src/record/recorder.js';
import { startCapture } from '../../src/record/capture.js';
import { AgentBus } from '../../src/cortex/events.js';

const dir = () => mkdtempSync(join(tmpdir(), 'cortexd-record-'));
const ev = (e: Record<string, unknown>) => e as unknown as AgentEvent;

t.test('events and frames are written on channels with schemas that @mcap/core reads back in order', async (t) => {
  const file = join(dir(), 'run.mcap');
  const rec = await Recorder.open({
    file,
    attachments: [{ name: 'config.json', mediaType: 'application/json', data: Buffer.from('{"file":"x","config":{}}') }],
  });
  const t0 = Date.now();
  for (let i = 0; i < 50; i++) rec.write(eventChannel('tick'), eventMessage(ev({ type: 'tick', at: t0 + i * 100, mode: 'idle', n: i })), t0 + i * 100);
  rec.write(eventChannel('prompt'), eventMessage(ev({ type: 'prompt', at: t0 + 10, prompt: 'my key is key_live_abcdef123456' })), t0 + 10);
  rec.write(cameraChannel('cam'), frameMessage('cam', Buffer.from([0xff, 0xd8, 0xff, 0xd9]), t0 + 20), t0 + 20, true);
  const stats = await rec.close();
  t.equal(stats.messages, 52, 'every message written');

  const handle = await open(file, 'r');
  t.teardown(() => handle.close());
  const reader = await McapIndexedReader.Initialize({
    readable: new FileHandleReadable(handle),
    decompressHandlers,
  });
  const topics = [...reader.channelsById.values()].map((c) => c.topic).sort();
  t.same(topics, ['/camera/cam', '/events/prompt', '/events/tick'], 'one channel per event type and per camera');
  const schemas = [...reader.schemasById.values()].map((s) => `${s.name}/${s.encoding}`).sort();
  t.same(schemas, ['cortexd.event.prompt/jsonschema', 'cortexd.event.tick/jsonschema', 'foxglove.CompressedImage/jsonschema']);
  t.ok(
    [...reader.chunkIndexes].every((c) => c.compression === 'lz4'),
    'chunks are lz4-compressed',
  );
  let last = 0n;
  let n = 0;
  for await (const m of reader.readMessages()) {
    t.ok(m.logTime >= last, 'messages come in time order');
    last = m.logTime;
    n++;
  }
  t.equal(n, 52);
  const text = readFileSync(file);
  t.notOk(text.includes(Buffer.from('abcdef123456')), 'the key in a prompt is redacted, as in the logs');
  const back = await readRecording(file);
  t.equal(back.truncated, false);
  t.match(back.config, /"config"/, 'the configuration attachment is there');
  const s = summarise(back);
  t.equal(s.channels.find((c) => c.topic === '/events/tick')?.messages, 50);
});

t.test('chunks close every flush period: a file cut mid-write reads up to its last closed chunk', async (t) => {
  const file = join(dir(), 'cut.mcap');
  const rec = await Recorder.open({ file, flushMs: 50 });
  const t0 = Date.now();
  for (let i = 0; i < 10; i++) rec.write(eventChannel('tick'), { type: 'tick', at: t0 + i, n: i }, t0 + i);
  // Wait until the flush has written a chunk: the file grows past its header, then stays the same for
  // 100 ms (the chunk goes out in several writes; a copy taken between them would hold half of it).
  const sizeBefore = statSync(file).size;
  let last = sizeBefore;
  let still = 0;
  for (let k = 0; k < 400 && (last === sizeBefore || still < 5); k++) {
    await new Promise((r) => setTimeout(r, 20));
    const size = statSync(file).size;
    still = size === last ? still + 1 : 0;
    last = size;
  }
  t.ok(statSync(file).size > sizeBefore, 'the open chunk was written without closing the file');
  for (let i = 10; i < 20; i++) rec.write(eventChannel('tick'), { type: 'tick', at: t0 + i, n: i }, t0 + i);
  // A copy of the file as a kill -9 would leave it now (no footer, maybe a partial chunk).
  const copy = join(dir(), 'killed.mcap');
  writeFileSync(copy, readFileSync(file));
  truncateSync(copy, statSync(copy).size - 3);
  await rec.close();
  const cut = await readRecording(copy);
  t.equal(cut.truncated, true, 'the cut file is recognised as cut');
  t.ok(cut.messages.length >= 10, `the messages of the closed chunk are read (${cut.messages.length})`);
  t.same(
    cut.messages.slice(0, 10).map((m) => m.value.n),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
});

t.test('rotation: past its size a file is closed as FILE.1.mcap and only `keep` old files remain', async (t) => {
  const d = dir();
  const file = join(d, 'rot.mcap');
  const rec = await Recorder.open({ file, rotateBytes: 20_000, keep: 2 });
  const big = 'x'.repeat(1000);
  for (let i = 0; i < 120; i++) rec.write(eventChannel('input'), { type: 'input', at: i, text: big }, Date.now());
  const stats = await rec.close();
  t.ok(stats.files >= 4, `several files were started (${stats.files})`);
  t.same(readdirSync(d).sort(), ['rot.1.mcap', 'rot.2.mcap', 'rot.mcap'], 'the current file and two older ones');
  for (const f of readdirSync(d)) {
    const r = await readRecording(join(d, f));
    t.equal(r.truncated, false, `${f} is a whole file`);
  }
});

t.test('media is dropped (and counted) when writing falls behind; events are kept', async (t) => {
  const file = join(dir(), 'slow.mcap');
  const rec = await Recorder.open({ file, maxPending: 4 });
  const jpeg = Buffer.alloc(10_000, 1);
  for (let i = 0; i < 50; i++) rec.write(cameraChannel('cam'), frameMessage('cam', jpeg, i), i, true);
  rec.write(eventChannel('tick'), { type: 'tick', at: 1 }, 1);
  const stats = await rec.close();
  t.ok(stats.droppedMedia > 0, `frames dropped (${stats.droppedMedia})`);
  const back = await readRecording(file);
  t.equal(back.messages.filter((m) => m.topic === '/events/tick').length, 1, 'the event is in the file');
});

t.test('events past twice maxPending are dropped, counted, and said once; the capture says at close what the file lost', async (t) => {
  const file = join(dir(), 'behind.mcap');
  const said: string[] = [];
  const rec = await Recorder.open({ file, maxPending: 4, onDrop: (m) => said.push(m) });
  for (let i = 0; i < 50; i++) rec.write(eventChannel('tick'), { type: 'tick', at: i, n: i }, i);
  const stats = await rec.close();
  t.equal(stats.messages + stats.droppedEvents, 50, `every event is written or counted (${stats.messages} written, ${stats.droppedEvents} dropped)`);
  t.ok(stats.droppedEvents > 0);
  t.equal(said.length, 1, 'said once');
  t.match(said[0], /behind\.mcap fell behind \(\d+ messages waiting\): events are being dropped/);
  t.equal((await readRecording(file)).messages.filter((m) => m.topic === '/events/tick').length, stats.messages, 'what was written is in the file');

  // The same through the capture a run attaches: a burst of bus events with no turn of the event loop between them.
  const bus = new AgentBus();
  const warnings: string[] = [];
  const capture = await startCapture({ bus, record: { file: join(dir(), 'burst.mcap') }, onWarning: (m) => warnings.push(m) });
  for (let i = 0; i < 1500; i++) bus.emit({ type: 'tick', at: Date.now(), mode: 'idle', n: i, late_skipped: 0, lateness_ms: 0, called_model: false });
  const burst = await capture.close();
  t.ok(burst && burst.droppedEvents > 0, 'a burst of 1500 events passes the limit (1024 waiting)');
  t.equal(warnings.length, 2, 'said at the first drop and at close');
  t.match(warnings[1], new RegExp(`burst\\.mcap lost ${burst?.droppedEvents} events and 0 media messages`));
});

t.test('decisions: a changed keyword shows as exactly the mode switch that differs', async (t) => {
  const recorded = decisionsOf([
    { type: 'agent.started', at: 0 },
    { type: 'mode.changed', at: 1000, from: 'idle', to: 'chat', trigger: 'input_triggered' },
    { type: 'action', at: 1500, label: 'speak', state: 'queued', value: { sentence: 'hi', b: 1 } },
    { type: 'safety', at: 1600, kind: 'refused', label: 'move', value: 'run', cause: 'speed' },
  ]);
  const replayed = decisionsOf([
    { type: 'agent.started', at: 0 },
    { type: 'action', at: 1500, label: 'speak', state: 'queued', value: { b: 1, sentence: 'hi' } },
    { type: 'safety', at: 1600, kind: 'refused', label: 'move', value: 'run', cause: 'speed' },
  ]);
  const diff = diffDecisions(recorded, replayed);
  t.equal(diff.same, false);
  const only = diff.rows.filter((r) => !(r.recorded && r.replayed));
  t.equal(only.length, 1, 'one row differs');
  t.match(only[0]!.recorded?.text, /mode idle -> chat/);
  t.match(formatDiff(diff).join('\n'), /mode idle -> chat \(input_triggered\)\s+</);
  t.equal(diffDecisions(replayed, replayed).same, true, 'the same decisions compare equal (key order aside)');
});
