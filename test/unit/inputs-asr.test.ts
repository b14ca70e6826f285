// Proves the ASR inputs: a replayed microphone reaches the socket byte-exact, transcripts become messages and "Voice:" lines, echo is muted, 401 ends listening.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject, firstValueFrom, filter, take, toArray } from 'rxjs';
import { AsrInput, SpeechbASRInputSchema, SpeechlabASRInputSchema, createSpeechlabAsrInput, type AsrRaw } from '../../actors/inputs/asr-input.js';
import type { StreamLink } from '../../src/cloud/link.js';
import { createMicrophone } from '../../devices/microphone.js';
import { heardUtterance } from '../../src/service/backends/rule-chat.js';
import { CloudSocketAuthError } from '../../src/cloud/errors.js';
import { createLogger } from '../../src/log.js';
import { FakeLink } from '../../src/testing/fake-link.js';


const dir = mkdtempSync(join(tmpdir(), 'inputs-asr-'));
const pcm = Buffer.alloc(16000 * 2 * 0.35); // 350 ms at 16 kHz: three full 100 ms chunks and a tail
for (let i = 0; i < pcm.length; i++) pcm[i] = (i * 7) & 0xff;
const rawFile = join(dir, 'speech.raw');
writeFileSync(rawFile, pcm);

function makeInput(opts: { speaking?: BehaviorSubject<boolean>; connect?: () => Promise<StreamLink> } = {}) {
  const link = new FakeLink();
  const config = SpeechlabASRInputSchema.parse({ microphone: { binding: 'replay', file: rawFile, loop: false, realtime: false } });
  const microphone = createMicrophone(config.microphone);
  const input = new AsrInput('SpeechlabASRInput', config, {
    connect: opts.connect ?? (async () => link),
    microphone,
    ...(opts.speaking ? { speaker: { playing$: opts.speaking, stop: () => undefined } } : {}),
  });
  return { input, link };
}

const until = async (cond: () => boolean, what: string) => {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
};

t.test('the microphone reaches the socket byte-exact; transcripts become messages and one Voice line', async (t) => {
  const { input, link } = makeInput();
  const raws: AsrRaw[] = [];
  const sub = input.listen().subscribe((r) => raws.push(r));
  await until(() => Buffer.concat(link.audio).length === pcm.length, 'all audio at the socket');
  t.same(Buffer.concat(link.audio), pcm, 'every byte, in order');
  link.say({ type: 'partial', asr_reply: 'hello', clientId: 'c', time: 1 });
  link.say({ asr_reply: 'hello robot', clientId: 'c', time: 2 });
  link.say({ asr_reply: 'turn left', clientId: 'c', time: 3 });
  t.same(raws.map((r) => [r.kind, r.text]), [['partial', 'hello'], ['final', 'hello robot'], ['final', 'turn left']]);
  t.same(input.rawToText(raws[0]!)?.final, false, 'a partial does not wake the loop');
  t.same(input.rawToText(raws[1]!)?.final, true, 'a final does');
  const text = input.formattedLatestBuffer();
  t.equal(text, 'Voice: hello robot turn left', 'finals only, one line');
  t.equal(heardUtterance(`Inputs:\n${text}`), 'hello robot turn left', 'the offline rule model reads it as speech');
  t.equal(input.formattedLatestBuffer(), undefined, 'cleared after reading');
  sub.unsubscribe();
  t.equal(link.closed, 1000, 'unsubscribing closes the socket');
  await input.stop();
  await input.stop();
});

t.test('while the speaker plays, the socket gets silence of the same length', async (t) => {
  const speaking = new BehaviorSubject(true);
  const { input, link } = makeInput({ speaking });
  const sub = input.listen().subscribe();
  await until(() => Buffer.concat(link.audio).length === pcm.length, 'all audio at the socket');
  t.ok(Buffer.concat(link.audio).every((b) => b === 0), 'muted');
  sub.unsubscribe();
  await input.stop();
});

t.test('poll returns the next transcript event; a 401 ends listening with the server text', async (t) => {
  const { input, link } = makeInput();
  const polled = input.poll();
  await until(() => link.audio.length > 0, 'the socket open');
  link.say({ asr_reply: 'stop', clientId: 'c', time: 1 });
  t.match(await polled, { kind: 'final', text: 'stop' });
  await input.stop();
  t.equal(await input.poll(), undefined, 'a stopped input polls nothing');

  const denied = makeInput({
    connect: async () => {
      throw new CloudSocketAuthError('WS /api/core/speechlab/asr', 'Invalid API key: revoked');
    },
  });
  await t.rejects(firstValueFrom(denied.input.listen()), /recognition stopped: .*Invalid API key: revoked/);
  await denied.input.stop();
});

t.test('the buffer keeps at most buffer_size finals; the oldest go first and are counted', async (t) => {
  const config = SpeechlabASRInputSchema.parse({ buffer_size: 2, microphone: { binding: 'replay', file: rawFile, loop: false, realtime: false } });
  const link = new FakeLink();
  const input2 = new AsrInput('SpeechlabASRInput', config, { connect: async () => link, microphone: createMicrophone(config.microphone) });
  const got = firstValueFrom(input2.listen().pipe(filter((r) => r.kind === 'final'), take(3), toArray()));
  await until(() => link.audio.length > 0, 'the socket open');
  for (const w of ['one', 'two', 'three']) link.say({ asr_reply: w, clientId: 'c', time: 1 });
  await got;
  t.equal(input2.formattedLatestBuffer(), 'Voice: two three');
  t.equal(input2.dropped, 1);
  await input2.stop();
});

t.test('configs: defaults, the older interrupt name, and a clear error without the hosted service', async (t) => {
  const lab = SpeechlabASRInputSchema.parse({});
  t.match(lab, { language: 'auto', chunk_ms: 100, ring_ms: 10_000, microphone: { binding: 'recorder', rate: 16000 } });
  t.equal(SpeechbASRInputSchema.parse({}).language, 'en-US');
  t.equal(SpeechlabASRInputSchema.parse({ enable_tts_interrupt: true }).enable_tts_interrupt, true);
  t.notOk(SpeechlabASRInputSchema.safeParse({ microphone: { binding: 'replay' } }).success, 'replay needs a file');
  const ctx = { logger: createLogger({ level: 'silent' }), stateDir: dir, signal: new AbortController().signal };
  t.throws(() => createSpeechlabAsrInput({}, ctx), /SpeechlabASRInput: needs the hosted service/);
});
