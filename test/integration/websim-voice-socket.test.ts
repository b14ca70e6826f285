// WebSim's voice over real sockets: the microphone needs the token and one page holds it at a time, its frames reach the agent's microphones (a robot microphone gives way while the page streams), a flood or a malformed frame is cut, and the robot's speech reaches only the pages that listen, with a stop on interruption.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { WebSocket } from 'ws';
import { loadConfig } from '../../src/config/load.js';
import { BrowserAudioHub } from '../../src/cortex/browser-audio.js';
import { resolveWebSimOptions } from '../../src/websim/options.js';
import { WebSim } from '../../src/websim/server.js';
import { createMicrophone } from '../../devices/microphone.js';
import { createSpeaker } from '../../devices/speaker.js';
import { withBrowserSpeech } from '../../devices/speaker-browser.js';
import { wavHeader } from '../../devices/wav.js';
import { client, stubAgent } from '../helpers/websim.js';

t.setTimeout(120_000);

const logger = pino({ level: 'silent' });
const loaded = await loadConfig({ name: 'default' });
const ROOT = join(import.meta.dirname, '..', '..');

async function websim(t: Test) {
  const { agent } = stubAgent(loaded.config);
  const hub = new BrowserAudioHub();
  const stateDir = mkdtempSync(join(tmpdir(), 'cortexd-websim-voice-'));
  const sim = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent: { ...agent, browserAudio: hub }, logger, stateDir });
  t.teardown(() => sim.stop());
  await sim.start();
  const token = readFileSync(join(stateDir, 'websim-token'), 'utf8').trim();
  const url = `${sim.url!.replace('http', 'ws')}events`;
  const origin = { origin: sim.url!.replace(/\/$/, '') };
  const page = (authed: boolean) => client(url, authed ? { ...origin, authorization: `Bearer ${token}` } : origin);
  return { sim, hub, page };
}

type Page = Awaited<ReturnType<Awaited<ReturnType<typeof websim>>['page']>>;

let nextId = 1;
/** Sends a message and waits for its reply. */
async function ask(p: Page, m: Record<string, unknown>) {
  const id = nextId++;
  p.ws.send(JSON.stringify({ ...m, id }));
  return (await p.next((r) => r.type === 'reply' && r.id === id)) as { ok: boolean; reason?: string };
}

/** Waits (hang guard 10 s) until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

const closed = (ws: WebSocket) =>
  new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));

/** PCM frames of one value, so where audio came from can be told by its samples. */
const frame = (value: number, bytes = 3200) => {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 2) b.writeInt16LE(value, i);
  return b;
};

t.test('the microphone: the token, one page at a time, its frames heard, a robot microphone giving way', async (t) => {
  const { hub, page } = await websim(t);
  const viewer = await page(false);
  t.match(await ask(viewer, { type: 'mic.start' }), { ok: false, reason: /mic\.start needs the WebSim token/ }, 'a page that only watches may not talk');

  const a = await page(true);
  t.match(
    await ask(a, { type: 'mic.start' }),
    { ok: false, reason: /no input of the current mode listens/ },
    'nothing listens yet: said, not silently dropped',
  );

  // The agent's voice input: a replay microphone (the robot's) that gives way to the page while it streams.
  const mic = createMicrophone({ binding: 'replay', file: join(ROOT, 'config', 'media', 'turn_left.wav'), loop: true, period_ms: 20 }, { browser: hub });
  const heard: Buffer[] = [];
  const sub = mic.pcm().subscribe((b) => heard.push(b));
  t.teardown(() => sub.unsubscribe());
  await until(() => heard.length > 0);
  t.ok(heard.length > 0, 'before the page talks, the robot microphone is heard');

  t.match(await ask(a, { type: 'mic.start' }), { ok: true, reason: /the robot hears this page \(16000 Hz\)/ });
  const b = await page(true);
  t.match(await ask(b, { type: 'mic.start' }), { ok: false, reason: /another page holds the microphone/ }, 'a second page waits its turn');

  heard.length = 0;
  viewer.ws.send(frame(111));
  b.ws.send(frame(222));
  for (let i = 0; i < 3; i++) a.ws.send(frame(333));
  await until(() => heard.filter((x) => x.readInt16LE(0) === 333).length >= 3);
  t.equal(heard.filter((x) => x.readInt16LE(0) === 333).length, 3, "the holder's frames reach the microphone");
  t.equal(heard.filter((x) => x.readInt16LE(0) !== 333).length, 0, "neither the robot's microphone nor another page is heard meanwhile");

  // The holder leaves: the microphone is free again, the robot's microphone is heard again.
  const aClosed = closed(a.ws);
  a.ws.close();
  await aClosed;
  await until(() => hub.holder === undefined);
  t.equal(hub.holder, undefined, 'a page that closes releases the microphone');
  heard.length = 0;
  await until(() => heard.length > 0);
  t.ok(heard.length > 0 && heard.every((x) => x.readInt16LE(0) !== 333), 'the robot microphone is heard again');
  t.match(await ask(b, { type: 'mic.start' }), { ok: true }, 'the second page may talk now');
  t.match(await ask(b, { type: 'mic.stop' }), { ok: true, reason: 'microphone off' });
  t.equal(hub.holder, undefined);
});

t.test('a page that floods audio or sends what is not PCM is cut', async (t) => {
  const { sim, hub, page } = await websim(t);
  const sub = createMicrophone({ binding: 'websim' }, { browser: hub })
    .pcm()
    .subscribe(() => undefined);
  t.teardown(() => sub.unsubscribe());
  const flooder = await page(true);
  t.match(await ask(flooder, { type: 'mic.start' }), { ok: true });
  const cut = closed(flooder.ws);
  // 10 s of audio at once: ten times the burst a page may send beyond real time.
  for (let i = 0; i < 100; i++) flooder.ws.send(frame(1, 3200));
  t.match(await cut, { code: 1008, reason: 'audio flood' }, 'closed with the reason');
  t.equal(sim.dropped['audio flood'], 1, 'counted with the other dropped page sockets');
  t.equal(hub.holder, undefined, 'its microphone is released');

  const odd = await page(true);
  const oddCut = closed(odd.ws);
  odd.ws.send(Buffer.alloc(3));
  t.match(await oddCut, { code: 1008, reason: 'bad audio' }, 'an odd number of bytes is not 16-bit PCM');
});

t.test("the robot's speech reaches the pages that listen, and stops with an interruption", async (t) => {
  const { hub, page } = await websim(t);
  const listener = await page(false);
  const other = await page(false);
  t.match(await ask(listener, { type: 'speech.listen', on: true }), { ok: true }, 'listening needs no token (it is watching)');
  t.equal(hub.listening, 1);

  const speaker = withBrowserSpeech(createSpeaker({ binding: 'null', realtime: true }), hub);
  const pcm = frame(1000, 16000 * 2);
  const played = await speaker.play({ format: 'wav', data: Buffer.concat([wavHeader(pcm.length, 16000), pcm]) });
  t.ok(played.completed);
  const clip = (await listener.next((m) => m.type === 'speech')) as { mime: string; duration_ms: number; data: string };
  t.equal(clip.mime, 'audio/wav');
  t.equal(clip.duration_ms, 1000, 'one second of speech');
  const wav = Buffer.from(clip.data, 'base64');
  t.equal(wav.toString('ascii', 0, 4), 'RIFF', 'a WAV file the page plays');
  t.equal(wav.length, 44 + pcm.length);

  const abort = new AbortController();
  const playing = speaker.play({ format: 'pcm', rate: 16000, data: frame(5, 16000 * 2 * 5) }, abort.signal);
  await listener.next((m) => m.type === 'speech' && (m as { id: number }).id === 2);
  abort.abort();
  t.notOk((await playing).completed, 'the robot stopped talking');
  await listener.next((m) => m.type === 'speech.stop');
  t.pass('the page was told to stop playing');
  t.equal(other.seen.filter((m) => m.type === 'speech' || m.type === 'speech.stop').length, 0, 'a page that did not ask hears nothing');

  const gone = closed(listener.ws);
  listener.ws.close();
  await gone;
  await until(() => hub.listening === 0);
  t.equal(hub.listening, 0, 'a closed page no longer counts as listening');
});
