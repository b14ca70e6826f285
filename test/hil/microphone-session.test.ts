// HIL: the ASR input's recorder (a fake `arecord` first on PATH) runs under its session actor `device:microphone`: killed mid-stream it is reopened and speech is still transcribed by the local service; no capture device fails once with the reason; `max_restarts` ends in `failed`; quick deaths open the breaker; the WebSim page is still heard without a device.
import { requireCommands } from '../helpers/requires.js';
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { hostInput } from '../helpers/input-host.js';
import { AsrInput, SpeechlabASRInputSchema } from '../../actors/inputs/asr-input.js';
import { createMicrophone } from '../../devices/microphone.js';
import { linkFromAsrSession, type LinkConnector } from '../../src/cloud/link.js';
import { openSpeechlabAsr } from '../../src/cloud/sockets.js';
import { BrowserAudioHub } from '../../src/cortex/browser-audio.js';
import { startService } from '../../src/service/index.js';
import { FakeLink } from '../support/fake-link.js';
import { onBus, until } from '../helpers/wait.js';
import { streamState, streams } from '../helpers/bus-events.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

requireCommands(['espeak-ng', 'sox', 'pocketsphinx_continuous']);

const dir = mkdtempSync(join(tmpdir(), 'hil-mic-session-'));
const raw = join(dir, 'speech.raw');
execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', join(dir, 'speech.wav'), 'what is your name']);
execFileSync('sox', [join(dir, 'speech.wav'), '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', raw, 'pad', '1', '1.5']);

/** Puts a fake `arecord` running `body` (sh) first on PATH; every run appends its pid (the recorder's own: `exec` keeps it) to `pids`. */
function fakeRecorder(name: string, body: string): { pids: () => number[] } {
  const bin = join(dir, name);
  mkdirSync(bin);
  const pids = join(bin, 'pids');
  writeFileSync(join(bin, 'arecord'), `#!/bin/sh\necho $$ >> "${pids}"\n${body}\n`);
  chmodSync(join(bin, 'arecord'), 0o755);
  process.env.PATH = `${bin}:${process.env.PATH ?? ''}`;
  return { pids: () => (existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number) : []) };
}

/** An AsrInput on the recorder microphone, hosted in the real input actor. */
function recorderInput(connect: LinkConnector, options: { vad?: boolean; maxRestarts?: number; browser?: BrowserAudioHub } = {}) {
  const config = SpeechlabASRInputSchema.parse({
    language: 'en',
    microphone: {
      binding: 'recorder',
      recorder: 'arecord',
      restart_initial_ms: 20,
      restart_max_ms: 40,
      ...(options.maxRestarts !== undefined ? { max_restarts: options.maxRestarts } : {}),
    },
    vad: { enabled: options.vad ?? false },
  });
  return hostInput('SpeechlabASRInput', (callbacks) => {
    const microphone = createMicrophone(config.microphone, options.browser ? { browser: options.browser } : {});
    return new AsrInput('SpeechlabASRInput', config, { connect, microphone, ctx: callbacks });
  });
}

t.test('a recorder killed mid-stream is reopened by its session actor; the socket stays open and speech is still transcribed', async (t) => {
  // The fake hears the sentence once per run, then silence (a live microphone in a quiet room).
  const recorder = fakeRecorder('bin-speech', `cat "${raw}"\nexec sleep 3600`);
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'a'.repeat(40), logger: pino({ level: 'silent' }) });
  t.teardown(() => svc.close());
  const { apiKey } = svc.admin.createApiKey('robot');
  const host = recorderInput(
    async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: svc.wsUrl, apiKey, rate: 16000, languageCode: 'en', signal })),
    {
      vad: true,
    },
  );
  t.teardown(() => host.stop());
  const finals = () => host.messages.filter((m) => m.final).map((m) => m.text);
  const transcript = (what: string) => onBus(host.bus, (e) => e.type === 'input' && e.final === true, what);
  // Listened for as the input starts: a transcript needs the recorder, the socket and the recogniser first.
  await transcript('the first transcript');
  t.equal(finals().length, 1, 'one transcript');
  t.ok(host.ref().getSnapshot().children['device:microphone'], "the recorder's session is the input actor's child device:microphone");
  t.same(
    streams(host.events, 'mic').map((e) => e.state),
    ['connecting', 'streaming'],
    'the recorder opened, reported like a socket',
  );

  // A run that brought audio is healthy; once it stayed up the engine's shortest cycle (1 s), its end is
  // an outage to repair at once, not a failure to back off from.
  const session = host.ref().getSnapshot().children['device:microphone'] as { getSnapshot(): { hasTag(tag: string): boolean } };
  await until('the recorder healthy', () => session.getSnapshot().hasTag('healthy'));
  const openedAt = streams(host.events, 'mic').find((e) => e.state === 'streaming')!.at;
  await new Promise((r) => setTimeout(r, Math.max(0, openedAt + 1100 - Date.now())));
  const [first] = recorder.pids();
  // Killed from outside (the sound server, the OOM killer): not a stop the input asked for.
  const reopened = onBus(host.bus, streamState('mic', 'streaming'), 'the recorder reopened');
  const second = transcript('a transcript after the reopen');
  const killedAt = Date.now();
  process.kill(first!, 'SIGKILL');
  await reopened;
  // A figure for the report, not an assertion: the kill to the new recorder running.
  t.comment(`recorder running again ${streams(host.events, 'mic').at(-1)!.at - killedAt} ms after the SIGKILL`);
  await second;
  t.equal(finals().length, 2, 'one more transcript');
  const mic = streams(host.events, 'mic');
  const outage = mic.find((e) => e.state === 'connecting' && e.reason);
  t.match(outage, { connections: 1, reason: /arecord was stopped \(SIGKILL\)/ }, 'the outage is a state event with its reason');
  t.same(
    mic.map((e) => e.state),
    ['connecting', 'streaming', 'connecting', 'streaming'],
    'a run that was healthy is reopened at once (no backingOff)',
  );
  t.equal(recorder.pids().length, 2, 'one new recorder process');
  t.not(recorder.pids()[1], first, 'a new process, not the killed one');
  t.equal(streams(host.events, 'asr').filter((e) => e.state === 'streaming').length, 1, 'the recognition socket was not touched');
  t.ok(host.ref().getSnapshot().hasTag('listening'), 'the input listens on: nothing restarted it');
  t.equal(finals()[0], finals()[1], `the same words before and after (${finals()[0]})`);
  t.match(finals()[1], /name/, 'and they are the sentence');
  host.stop();
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await until('the recorder to end with the input', () => !alive(recorder.pids()[1]!));
  t.pass('stopping the input ends its recorder (the session actor owns it)');
});

t.test('no capture device: the recorder fails once with the reason, no retry, and listening ends', async (t) => {
  const recorder = fakeRecorder(
    'bin-nodevice',
    `echo "ALSA lib confmisc.c:855:(parse_card) cannot find card '0'" >&2\necho "arecord: main:850: audio open error: No such file or directory" >&2\nexit 1`,
  );
  let sockets = 0;
  const host = recorderInput(async () => (sockets++, new FakeLink()));
  t.teardown(() => host.stop());
  await until('the input to stop', () => host.ref().getSnapshot().hasTag('failed'));
  const failed = streams(host.events, 'mic').find((e) => e.state === 'failed');
  t.match(failed, { reason: 'microphone: no microphone (arecord found no capture device)' }, 'the device session failed with the reason in our words');
  t.match(
    host.events.find((e) => e.type === 'error'),
    { source: 'input.SpeechlabASRInput', message: /^input SpeechlabASRInput stopped: .*microphone stopped: microphone: no microphone/ },
    'the input stops with it',
  );
  t.notOk(
    streams(host.events, 'mic').some((e) => e.state === 'backingOff'),
    'no reopen was planned',
  );
  t.equal(recorder.pids().length, 1, 'the recorder ran once');
  t.ok(sockets <= 1, 'nothing restarted the input on top');
});

t.test('max_restarts: a recorder that keeps exiting with no audio is reopened that many times, each said on the bus, then fails', async (t) => {
  const recorder = fakeRecorder('bin-exit', 'echo "arecord: busy" >&2\nexit 3');
  const host = recorderInput(async () => new FakeLink(), { maxRestarts: 2 });
  t.teardown(() => host.stop());
  await until('the input to stop', () => host.ref().getSnapshot().hasTag('failed'));
  const errors = host.events.flatMap((e) => (e.type === 'error' ? [e.message] : []));
  t.match(
    errors.slice(0, 2),
    [/^microphone: arecord exited with code 3: arecord: busy; the device is reopened in \d+ ms$/, /the device is reopened in \d+ ms$/],
    'each reopen is an error on the bus, from the backingOff state events',
  );
  t.match(
    streams(host.events, 'mic').find((e) => e.state === 'failed'),
    { reason: /gave up restarting \(3 failures in a row with no audio\): arecord exited with code 3/ },
  );
  t.match(errors.at(-1), /stopped: .*microphone stopped: microphone: gave up restarting/);
  t.equal(recorder.pids().length, 3, 'the first run and two restarts');
});

t.test("a recorder that keeps dying at once opens the engine's breaker: reopens slow down instead of a storm", async (t) => {
  const recorder = fakeRecorder('bin-crash', 'exit 2');
  const host = recorderInput(async () => new FakeLink());
  t.teardown(() => host.stop());
  await until('the breaker open', () => streams(host.events, 'mic').some((e) => e.breaker === true));
  const backoffs = streams(host.events, 'mic').filter((e) => e.state === 'backingOff');
  const open = backoffs.findIndex((e) => e.breaker === true);
  t.equal(open, 4, 'after five quick failures in a row (the engine default for every connection)');
  t.match(backoffs[open], { reason: /arecord exited with code 2; 5 connections in a row closed before they were healthy: breaker open/ });
  t.ok(backoffs[open]!.delay_ms! >= 1000, `the probe waits the breaker's time (${backoffs[open]!.delay_ms} ms), not the 20-40 ms backoff`);
  const mic = streams(host.events, 'mic');
  t.equal(mic.slice(0, mic.indexOf(backoffs[open]!)).filter((e) => e.state === 'streaming').length, 5, 'five runs before it');
  t.ok(recorder.pids().length >= 5);
  t.ok(host.ref().getSnapshot().hasTag('listening'), 'no max_restarts: the input listens on while the device is probed');
});

t.test('no capture device but the WebSim page is there: the input listens on and hears the page', async (t) => {
  fakeRecorder('bin-nodevice-page', 'echo "arecord: main:850: audio open error: No such file or directory" >&2\nexit 1');
  const hub = new BrowserAudioHub();
  const link = new FakeLink();
  const host = recorderInput(async () => link, { browser: hub });
  t.teardown(() => host.stop());
  await until('the recorder to fail', () => streams(host.events, 'mic').some((e) => e.state === 'failed'));
  await until('the socket open', () => hub.listeners === 1 && streams(host.events, 'asr').some((e) => e.state === 'streaming'));
  t.ok(hub.claim('page').ok);
  const pcm = Buffer.alloc(3200, 7);
  hub.push('page', pcm);
  await until("the page's audio at the socket", () => Buffer.concat(link.audio).length >= pcm.length);
  t.ok(host.ref().getSnapshot().hasTag('listening'), 'still listening');
  t.notOk(
    host.events.some((e) => e.type === 'error'),
    'no error stopped it',
  );
});
