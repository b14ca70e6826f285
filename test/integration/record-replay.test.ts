// `run --record` of a real agent (replayed microphone, synthetic camera, typed lines) read back with @mcap/core; replay matches, a changed keyword differs (exit 1), the recorded model makes no network call; kill -9 leaves a readable file; --foxglove serves the channels live.
import t from 'tap';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { McapIndexedReader, McapWriter } from '@mcap/core';
import { FileHandleReadable, FileHandleWritable } from '@mcap/nodejs';
import foxglove from '@foxglove/ws-protocol';
import { compressChunk, decompressHandlers } from '../../src/record/compression.js';
import WebSocket from 'ws';
import { readRecording } from '../../src/record/reader.js';
import { MAIN, startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { requireBuild } from '../helpers/requires.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

requireBuild();
const { FoxgloveClient } = foxglove;
const WAV = join(import.meta.dirname, '..', '..', 'config', 'media', 'turn_left.wav');

function configText(socket: string, wav: string, keyword = "let's chat", base = 'embedded'): string {
  return JSON.stringify({
    version: 'v1.0.5',
    name: 'recorded',
    default_mode: 'idle',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: 'obey',
    service: { base_url: base, ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' },
    cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
    modes: {
      idle: {
        display_name: 'Idle',
        description: 'listens, looks and reads',
        system_prompt_base: 'You are a robot. Answer briefly.',
        hertz: 4,
        agent_inputs: [
          { type: 'TextInput', config: { source: 'socket', path: socket, descriptor: 'Voice' } },
          { type: 'SpeechlabASRInput', config: { descriptor: 'Heard', language: 'en', microphone: { binding: 'replay', file: wav, loop: true } } },
          { type: 'LocalVLMInput', config: { descriptor: 'Vision', fps: 2, camera: { binding: 'synthetic', fps: 5 } } },
        ],
        agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
      },
      chat: {
        display_name: 'Chat',
        description: 'talks',
        system_prompt_base: 'You are a robot in conversation. Answer briefly.',
        hertz: 4,
        agent_inputs: [{ type: 'TextInput', config: { source: 'socket', path: socket, descriptor: 'Voice' } }],
        agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
      },
    },
    transition_rules: [
      { from_mode: 'idle', to_mode: 'chat', transition_type: 'input_triggered', trigger_keywords: [keyword], priority: 2 },
      { from_mode: 'chat', to_mode: 'idle', transition_type: 'input_triggered', trigger_keywords: ['goodbye'], priority: 2 },
    ],
  });
}

/** Runs `cortexd replay` and resolves with its exit code and output. */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('exit', (code) => resolve({ code: code ?? 1, out, err }));
  });
}

t.test('a recorded run reads back, replays to the same decisions, and a changed keyword is reported', async (t) => {
  const w = workDir();
  mkdirSync(join(w.dir, 'media'));
  const wav = join(w.dir, 'media', 'voice.wav');
  copyFileSync(WAV, wav);
  const config = w.file('recorded.json5');
  writeFileSync(config, configText(w.socket, wav));
  const file = w.file('run.mcap');
  // Info lines too, so the log channel has the run's first lines (the e-stop socket's address).
  const agent = startAgent(config, w.state, ['--record', file, '--for', '90s'], { CORTEX_LOG_LEVEL: 'info' });
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick', 30_000, 'the first tick');
  await agent.waitFor((e) => e.type === 'context' && e.source === 'input.LocalVLMInput', 30_000, 'the camera analysed');
  await typeLines(w.socket, ['hello there']);
  await agent.waitFor((e) => e.type === 'action' && e.label === 'speak' && e.state === 'done', 30_000, 'an answer spoken');
  await typeLines(w.socket, ["let's chat"]);
  await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'chat', 30_000, 'the switch to chat');
  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'chat', 30_000, 'chat running');
  await typeLines(w.socket, ['what is your name']);
  await agent.waitFor((e) => e.type === 'action' && e.mode === 'chat' && e.state === 'done', 30_000, 'an answer in chat');
  await typeLines(w.socket, ['goodbye']);
  await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'idle' && e.from === 'chat', 30_000, 'back to idle');
  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'idle' && e.at > Date.now() - 100, 30_000, 'a tick in idle again');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'the agent stops cleanly');
  t.match(agent.stderr(), /recording to .*run\.mcap/, 'the run says where it records');

  // Read back with @mcap/core's indexed reader: channels, schemas, counts and order.
  const handle = await open(file, 'r');
  const reader = await McapIndexedReader.Initialize({
    readable: new FileHandleReadable(handle),
    decompressHandlers,
  });
  const byTopic = new Map<string, number>();
  const topicOf = new Map([...reader.channelsById].map(([id, c]) => [id, c.topic]));
  let last = 0n;
  let ordered = true;
  const firstValue = new Map<string, Record<string, unknown>>();
  const logValues: Array<Record<string, unknown>> = [];
  for await (const m of reader.readMessages()) {
    const topic = topicOf.get(m.channelId)!;
    byTopic.set(topic, (byTopic.get(topic) ?? 0) + 1);
    if (!firstValue.has(topic)) firstValue.set(topic, JSON.parse(Buffer.from(m.data).toString('utf8')) as Record<string, unknown>);
    if (topic === '/log') logValues.push(JSON.parse(Buffer.from(m.data).toString('utf8')) as Record<string, unknown>);
    if (m.logTime < last) ordered = false;
    last = m.logTime;
  }
  await handle.close();
  t.ok(ordered, 'messages are in time order');
  const schemaOf = (topic: string) => {
    const ch = [...reader.channelsById.values()].find((c) => c.topic === topic);
    return ch ? reader.schemasById.get(ch.schemaId)?.name : undefined;
  };
  t.equal(schemaOf('/camera/LocalVLMInput'), 'foxglove.CompressedImage', 'camera frames as foxglove.CompressedImage');
  t.equal(schemaOf('/microphone/SpeechlabASRInput'), 'foxglove.RawAudio', 'microphone audio as foxglove.RawAudio (Foxglove plays it)');
  t.equal(schemaOf('/log'), 'foxglove.Log', 'the log lines as foxglove.Log');
  t.equal(schemaOf('/cortexd/sync'), 'cortexd.Sync', 'the chunk-closing channel has a schema too');
  const schemaless = [...reader.channelsById.values()].filter((c) => c.schemaId === 0 || !reader.schemasById.has(c.schemaId)).map((c) => c.topic);
  t.same(schemaless, [], 'every channel has a schema');
  t.ok(
    [...reader.channelsById.values()].every((c) => c.messageEncoding === 'json' && reader.schemasById.get(c.schemaId)?.encoding === 'jsonschema'),
    'every channel is JSON with a JSON Schema',
  );
  const audio = firstValue.get('/microphone/SpeechlabASRInput')!;
  t.match(
    audio,
    { format: 'pcm-s16', sample_rate: 16000, number_of_channels: 1, timestamp: { sec: Number, nsec: Number } },
    'audio fields as Foxglove names them',
  );
  t.ok(Buffer.from(String(audio.data), 'base64').length > 0, 'audio data in base64');
  t.ok(logValues.length > 0, `the run's log lines are recorded (${logValues.length})`);
  t.ok(
    logValues.every((v) => [0, 1, 2, 3, 4, 5].includes(v.level as number) && typeof v.message === 'string' && /^cortexd/.test(String(v.name))),
    'each as foxglove.Log: a LogLevel, a message, who said it',
  );
  t.ok(
    logValues.some((v) => v.level === 2),
    'info lines as INFO (2)',
  );
  t.ok((byTopic.get('/camera/LocalVLMInput') ?? 0) > 0 && (byTopic.get('/microphone/SpeechlabASRInput') ?? 0) > 0, 'frames and audio are recorded');
  const count = (type: string) => agent.events.filter((e) => e.type === type).length;
  for (const type of ['mode.changed', 'prompt', 'model.answer', 'action'])
    t.equal(byTopic.get(`/events/${type}`), count(type), `every ${type} event is recorded (${count(type)})`);

  // Replay against the recorded configuration: the same decisions, exit 0.
  const same = await cli(['replay', file]);
  t.equal(same.code, 0, `replay matches: ${same.out}${same.err}`);
  t.match(same.out, /same decisions/);
  const speed = /\((\d+)x real time\)/.exec(same.out);
  t.ok(speed, 'the replay says how fast it ran');

  // The configured model (the embedded rule model, deterministic) answers live: the same decisions.
  const live = await cli(['replay', file, '--model', 'live']);
  t.equal(live.code, 0, `a live replay with the same model matches: ${live.out}${live.err}`);
  t.match(live.out, /model live/);

  // Against a copy with one keyword changed: exactly the changed switch (and what followed in chat) differs, exit 1.
  // The copy's model address is a port that counts connections: the recorded model must make none.
  let connections = 0;
  const trap = createServer((s) => (connections++, s.destroy()));
  await new Promise<void>((r) => trap.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => void trap.close());
  const port = (trap.address() as { port: number }).port;
  const changed = w.file('changed.json5');
  writeFileSync(changed, configText(w.socket, wav, 'shall we chat', `http://127.0.0.1:${port}`));
  const diff = await cli(['replay', file, '--config', changed, '--model', 'recorded']);
  t.equal(diff.code, 1, 'a difference exits 1');
  t.match(diff.out, /mode idle -> chat \(input_triggered\)\s+</, 'the switch that no longer happens is shown on the recorded side');
  t.notMatch(diff.out, /^.*>\s+\S*\s*mode idle -> chat/m, 'and not on the replayed side');
  t.equal(connections, 0, 'the recorded model made no network call');

  const summary = await cli(['replay', file, '--summary']);
  t.equal(summary.code, 0);
  t.match(summary.out, /modes: idle -> chat -> idle/);
  t.match(summary.out, /\/camera\/LocalVLMInput\s+\d+ messages/);
  t.match(summary.out, /foxglove\.RawAudio/);

  // A recording as cortexd wrote them before Foxglove's schemas: `cortexd.RawAudio` (format pcm_s16le),
  // no log channel, zeros on a sync channel without a schema. Replay still reads it.
  const old = w.file('before-foxglove-schemas.mcap');
  await writeOldFormat(file, old);
  const oldSummary = await cli(['replay', old, '--summary']);
  t.equal(oldSummary.code, 0, oldSummary.err);
  t.match(oldSummary.out, /cortexd\.RawAudio/, 'the old audio schema is read');
  t.match(oldSummary.out, /modes: idle -> chat -> idle/);
  const oldReplay = await cli(['replay', old]);
  t.equal(oldReplay.code, 0, `an old recording replays to the same decisions: ${oldReplay.out}${oldReplay.err}`);
  t.match(oldReplay.out, /same decisions/);
});

/** Rewrites `from` as cortexd wrote recordings before Foxglove's schemas (see the test above). */
async function writeOldFormat(from: string, to: string): Promise<void> {
  const input = await open(from, 'r');
  const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(input), decompressHandlers });
  const output = await open(to, 'w');
  const writer = new McapWriter({ writable: new FileHandleWritable(output), chunkSize: 64 * 1024, compressChunk });
  await writer.start({ profile: '', library: 'cortexd' });
  for await (const a of reader.readAttachments()) await writer.addAttachment(a);
  const ids = new Map<number, number>();
  for (const [id, c] of reader.channelsById) {
    if (c.topic === '/log') continue;
    const schema = reader.schemasById.get(c.schemaId)!;
    if (c.topic === '/cortexd/sync') {
      ids.set(id, await writer.registerChannel({ schemaId: 0, topic: c.topic, messageEncoding: '', metadata: new Map() }));
      continue;
    }
    const old = schema.name === 'foxglove.RawAudio' ? 'cortexd.RawAudio' : schema.name;
    const schemaId = await writer.registerSchema({ name: old, encoding: schema.encoding, data: schema.data });
    ids.set(id, await writer.registerChannel({ schemaId, topic: c.topic, messageEncoding: c.messageEncoding, metadata: new Map() }));
  }
  for await (const m of reader.readMessages()) {
    const channelId = ids.get(m.channelId);
    if (channelId === undefined) continue;
    const topic = reader.channelsById.get(m.channelId)!.topic;
    let data: Uint8Array = m.data;
    if (topic === '/cortexd/sync') data = new Uint8Array(m.data.byteLength);
    else if (topic.startsWith('/microphone/')) {
      const v = JSON.parse(Buffer.from(m.data).toString('utf8')) as Record<string, unknown>;
      data = Buffer.from(JSON.stringify({ ...v, format: 'pcm_s16le' }));
    }
    await writer.addMessage({ ...m, channelId, data });
  }
  await writer.end();
  await output.close();
  await input.close();
}

t.test('kill -9 mid-run leaves a recording that reads up to its last second', async (t) => {
  const w = workDir();
  const config = w.file('killed.json5');
  writeFileSync(config, configText(w.socket, WAV));
  const file = w.file('killed.mcap');
  const agent = startAgent(config, w.state, ['--record', file, '--for', '90s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick', 30_000, 'the first tick');
  const firstTick = agent.events.find((e) => e.type === 'tick')!.at;
  await agent.waitFor((e) => e.type === 'tick' && e.at > firstTick + 3000, 30_000, 'three seconds of ticks');
  const lastSeen = agent.events.filter((e) => e.type === 'tick').at(-1)!.at;
  agent.child.kill('SIGKILL');
  await agent.exited;
  t.ok(existsSync(file));
  const rec = await readRecording(file);
  t.equal(rec.truncated, true, 'the file has no footer: it was cut');
  const ticks = rec.messages.filter((m) => m.topic === '/events/tick');
  t.ok(ticks.length > 0, `ticks read back (${ticks.length})`);
  // At most the last second (plus a loaded machine's scheduling) is lost.
  t.ok(ticks.at(-1)!.atMs >= lastSeen - 2500, `the last recorded tick (${ticks.at(-1)!.atMs}) is within the last seconds before the kill (${lastSeen})`);
});

t.test('--foxglove serves the run live: a Foxglove client subscribes and receives frames and events', async (t) => {
  const w = workDir();
  const config = w.file('live.json5');
  writeFileSync(config, configText(w.socket, WAV));
  const agent = startAgent(config, w.state, ['--foxglove', '0', '--for', '90s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick', 30_000, 'the first tick');
  let url: string | undefined;
  for (let i = 0; i < 100 && !url; i++) {
    url = /Foxglove live view at (ws:\/\/\S+)/.exec(agent.stderr())?.[1];
    if (!url) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(url, 'the run prints the live address');
  t.match(agent.stderr(), /\?token=TOKEN .*TOKEN is in \S+websim-token/, 'and where its token is kept');
  // The token WebSim uses, generated into the state directory: the socket serves no one without it.
  const token = readFileSync(join(w.state, 'websim-token'), 'utf8').trim();
  const client = new FoxgloveClient({ ws: new WebSocket(`${url!}/?token=${encodeURIComponent(token)}`, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
  t.teardown(() => client.close());
  const got = new Map<string, number>();
  const subscribed = new Map<number, string>();
  const wanted = ['/events/tick', '/camera/LocalVLMInput'];
  client.on('advertise', (channels) => {
    for (const c of channels) if (wanted.includes(c.topic)) subscribed.set(client.subscribe(c.id), c.topic);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no frames and ticks in 30 s: ${JSON.stringify([...got])}`)), 30_000);
    client.on('message', ({ subscriptionId, data }) => {
      const topic = subscribed.get(subscriptionId);
      if (!topic) return;
      const value = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as Record<string, unknown>;
      if (topic === '/camera/LocalVLMInput') t.equal(value.format, 'jpeg');
      got.set(topic, (got.get(topic) ?? 0) + 1);
      if (wanted.every((w) => (got.get(w) ?? 0) >= 2)) clearTimeout(timer), resolve();
    });
  });
  t.pass('ticks and camera frames arrived live');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});
