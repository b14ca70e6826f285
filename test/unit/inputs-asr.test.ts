// Proves the ASR inputs: a replayed microphone reaches the socket byte-exact, transcripts become messages and "Voice:" lines, echo is muted, 401 ends listening.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject } from 'rxjs';
import { hostInput } from '../helpers/input-host.js';
import { AsrInput, SpeechbASRInputSchema, SpeechlabASRInputSchema, createSpeechlabAsrInput } from '../../actors/inputs/asr-input.js';
import type { StreamLink } from '../../src/cloud/link.js';
import { createMicrophone } from '../../devices/microphone.js';
import { heardUtterance } from '../../src/service/backends/rule-chat.js';
import { CloudSocketAuthError } from '../../src/cloud/errors.js';
import { createLogger } from '../../src/log.js';
import { FakeLink } from '../support/fake-link.js';

const dir = mkdtempSync(join(tmpdir(), 'inputs-asr-'));
const pcm = Buffer.alloc(16000 * 2 * 0.35); // 350 ms at 16 kHz: three full 100 ms chunks and a tail
for (let i = 0; i < pcm.length; i++) pcm[i] = (i * 7) & 0xff;
const rawFile = join(dir, 'speech.raw');
writeFileSync(rawFile, pcm);

/** An AsrInput on the replayed recording and a scripted link, run in the real input actor (its session is the actor's child). */
function makeInput(opts: { speaking?: BehaviorSubject<boolean>; connect?: () => Promise<StreamLink>; bufferSize?: number; file?: string } = {}) {
  const link = new FakeLink();
  // Voice detection off: these tests follow every byte of a recording that is not speech (see asr-vad tests for it on).
  const config = SpeechlabASRInputSchema.parse({
    buffer_size: opts.bufferSize ?? 20,
    microphone: { binding: 'replay', file: opts.file ?? rawFile, loop: false, realtime: false },
    vad: { enabled: false },
  });
  let plugin: AsrInput | undefined;
  const host = hostInput(
    'SpeechlabASRInput',
    (callbacks) =>
      (plugin = new AsrInput('SpeechlabASRInput', config, {
        connect: opts.connect ?? (async () => link),
        microphone: createMicrophone(config.microphone),
        ...(opts.speaking ? { speaker: { playing$: opts.speaking, stop: () => undefined } } : {}),
        ctx: callbacks,
      })),
  );
  return { host, link, input: () => plugin! };
}

const until = async (cond: () => boolean, what: string) => {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
};

t.test('the microphone reaches the socket byte-exact; transcripts become messages and one Voice line', async (t) => {
  const { host, link, input } = makeInput();
  await until(() => Buffer.concat(link.audio).length === pcm.length, 'all audio at the socket');
  t.same(Buffer.concat(link.audio), pcm, 'every byte, in order');
  t.ok(host.ref().getSnapshot().children['stream:asr'], "the socket session is the input actor's child stream:asr");
  link.say({ type: 'partial', asr_reply: 'hello', clientId: 'c', time: 1 });
  link.say({ asr_reply: 'hello robot', clientId: 'c', time: 2 });
  link.say({ asr_reply: 'turn left', clientId: 'c', time: 3 });
  await until(() => host.messages.length === 3, 'three messages');
  t.same(
    host.messages.map((m) => [m.text, m.final]),
    [
      ['hello', false],
      ['hello robot', true],
      ['turn left', true],
    ],
    'a partial does not wake the loop, a final does',
  );
  const text = input().formattedLatestBuffer();
  t.equal(text, 'Voice: hello robot turn left', 'finals only, one line');
  t.equal(heardUtterance(`Inputs:\n${text}`), 'hello robot turn left', 'the offline rule model reads it as speech');
  t.equal(input().formattedLatestBuffer(), undefined, 'cleared after reading');
  t.same(host.contexts.at(-1) && Object.keys(host.contexts.at(-1)!), ['last_utterance_at'], 'the time of the last utterance is published as context');
  const states = () => host.events.flatMap((e) => (e.type === 'stream' ? [e.state] : []));
  t.same(states().slice(0, 2), ['connecting', 'streaming'], 'the socket states are on the bus as stream events');
  host.stop();
  t.equal(link.closed, 1000, 'stopping the input closes the socket');
  t.equal(states().at(-1), 'stopped', 'and its end');
});

t.test("one way for a transcript: the session's final reaches the input actor's parent once, not through the plugin's raw stream", async (t) => {
  const { host, link, input } = makeInput();
  await until(() => link.audio.length > 0, 'the socket open');
  const relayed: unknown[] = [];
  const sub = input()
    .listen()
    .subscribe((raw) => relayed.push(raw));
  link.server({ type: 'close', code: 1011, reason: 'server error' });
  await until(() => host.events.filter((e) => e.type === 'stream' && e.state === 'streaming').length === 2, 'a reconnect');
  link.say({ asr_reply: 'hello robot', clientId: 'c', time: 2 });
  await until(() => host.messages.length === 1, 'the final');
  t.same(
    host.messages.map((m) => [m.text, m.final]),
    [['hello robot', true]],
    'one input event',
  );
  t.same(relayed, [], "the plugin's listen() carried no transcript (nothing relayed back through it)");
  t.equal(input().formattedLatestBuffer(), 'Voice: hello robot', 'an outage healed before the tick is not said (health read from the session state events)');
  sub.unsubscribe();
  host.stop();
});

t.test('while the speaker plays, the socket gets silence of the same length', async (t) => {
  const speaking = new BehaviorSubject(true);
  const { host, link } = makeInput({ speaking });
  await until(() => Buffer.concat(link.audio).length === pcm.length, 'all audio at the socket');
  t.ok(
    Buffer.concat(link.audio).every((b) => b === 0),
    'muted',
  );
  host.stop();
});

t.test('poll returns the next transcript event; a 401 stops the input with the server text, without retrying', async (t) => {
  const { host, link, input } = makeInput();
  await until(() => link.audio.length > 0, 'the socket open');
  const polled = input().poll();
  link.say({ asr_reply: 'stop', clientId: 'c', time: 1 });
  t.match(await polled, { kind: 'final', text: 'stop' });
  host.stop();
  t.equal(await input().poll(), undefined, 'a stopped input polls nothing');

  let attempts = 0;
  const denied = makeInput({
    connect: async () => {
      attempts++;
      throw new CloudSocketAuthError('WS /api/core/speechlab/asr', 'Invalid API key: revoked');
    },
  });
  await until(() => denied.host.ref().getSnapshot().hasTag('failed'), 'the input to stop');
  const error = denied.host.events.find((e) => e.type === 'error');
  t.match(error, { source: 'input.SpeechlabASRInput', message: /recognition stopped: .*Invalid API key: revoked/ });
  t.ok(
    denied.host.events.some((e) => e.type === 'stream' && e.kind === 'asr' && e.state === 'failed' && /revoked/.test(e.reason ?? '')),
    "the failure is a stream event with the server's reason",
  );
  t.equal(attempts, 1, 'a refused key is not retried');
  t.equal(denied.input().formattedLatestBuffer(), 'Voice: not available (stopped)', 'the prompt says the voice is gone, once');
  t.equal(denied.input().formattedLatestBuffer(), undefined);
  denied.host.stop();
});

t.test('one retry layer: the session actor reconnects the socket and the input is not restarted; a microphone that fails stops the input', async (t) => {
  const links: FakeLink[] = [];
  const connect = async () => {
    const l = new FakeLink();
    links.push(l);
    return l;
  };
  const { host } = makeInput({ connect });
  await until(() => links[0] !== undefined && links[0].audio.length > 0, 'the socket open');
  const plugin = host.slot()?.plugin;
  links[0]!.server({ type: 'close', code: 1011, reason: 'server error' });
  await until(() => links.length === 2, 'the session actor to reconnect');
  t.equal(host.slot()?.plugin, plugin, 'the same plugin (and microphone): the input actor restarted nothing');
  t.ok(host.ref().getSnapshot().hasTag('listening'), 'the input listens on');
  t.notOk(
    host.events.some((e) => e.type === 'error'),
    "no error: a lost socket is the session actor's alone",
  );
  host.stop();

  const empty = join(dir, 'empty.raw');
  writeFileSync(empty, Buffer.alloc(0));
  let opened = 0;
  const deaf = makeInput({ file: empty, connect: async () => (opened++, new FakeLink()) });
  await until(() => deaf.host.ref().getSnapshot().hasTag('failed'), 'the input to stop');
  t.match(
    deaf.host.events.find((e) => e.type === 'error'),
    { source: 'input.SpeechlabASRInput', message: /^input SpeechlabASRInput stopped: .*microphone stopped/ },
    'a microphone that failed (or gave up restarting itself) stops the input, with the reason',
  );
  t.ok(opened <= 1, 'and no second socket: nothing restarted the input on top');
  deaf.host.stop();
});

t.test('the buffer keeps at most buffer_size finals; the oldest go first and are counted', async (t) => {
  const { host, link, input } = makeInput({ bufferSize: 2 });
  await until(() => link.audio.length > 0, 'the socket open');
  for (const w of ['one', 'two', 'three']) link.say({ asr_reply: w, clientId: 'c', time: 1 });
  await until(() => host.messages.length === 3, 'three finals');
  t.equal(input().formattedLatestBuffer(), 'Voice: two three');
  t.equal(input().dropped, 1);
  host.stop();
});

t.test('configs: defaults, the older interrupt name, and a clear error without the hosted service', async (t) => {
  const lab = SpeechlabASRInputSchema.parse({});
  t.match(lab, {
    language: 'auto',
    chunk_ms: 100,
    ring_ms: 10_000,
    microphone: { binding: 'recorder', rate: 16000 },
    vad: { enabled: true, pre_roll_ms: 300, hangover_ms: 150, commit_ms: 600 },
  });
  t.equal(SpeechbASRInputSchema.parse({}).language, 'en-US');
  t.equal(SpeechlabASRInputSchema.parse({ enable_tts_interrupt: true }).enable_tts_interrupt, true);
  t.notOk(SpeechlabASRInputSchema.safeParse({ microphone: { binding: 'replay' } }).success, 'replay needs a file');
  const ctx = { logger: createLogger({ level: 'silent' }), stateDir: dir, signal: new AbortController().signal };
  t.throws(() => createSpeechlabAsrInput({}, ctx), /SpeechlabASRInput: needs the hosted service/);
});
