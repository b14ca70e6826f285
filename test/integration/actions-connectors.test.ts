// Proves the connectors against real peers: espeak-ng and hosted TTS from the local service into a file speaker, a serial controller on a socat pty, websim events.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { pino } from 'pino';
import { filter, firstValueFrom } from 'rxjs';
import { SerialPort, ReadlineParser } from 'serialport';
import { createActionHandle } from '../../actors/actions/action.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { createCloudClient, type CloudClient } from '../../src/cloud/client.js';
import type { ResolvedAddresses } from '../../src/cloud/addresses.js';
import { NO_RETRY } from '../../src/cloud/retry.js';
import { ttsCost } from '../../src/cloud/prices.js';
import { startService, type RunningService } from '../../src/service/index.js';
import type { ActionConfig } from '../../src/config/schema.js';
import { isWav, parseWav } from '../../devices/wav.js';
import type { Plugins } from '../../actors/plugin-registry.js';
import { allActionPlugins } from '../helpers/plugins.js';
import { startGovernor } from '../helpers/governor.js';
import { sharedSerialLine } from '../../devices/serial.js';

type ActionEv = Extract<AgentEvent, { type: 'action' }>;
const logger = pino({ level: 'silent' });
let svc: RunningService;
let cloud: CloudClient;
let plugins: Plugins;
let keyId: string;
t.before(async () => {
  plugins = await allActionPlugins();
  svc = await startService({ dbPath: ':memory:', jwtSecret: 's'.repeat(32), logger });
  const { apiKey, info } = svc.admin.createApiKey('robot');
  keyId = info.id;
  cloud = createCloudClient({
    addresses: { base_url: svc.url, ws_base_url: svc.wsUrl, asr_ws_url: svc.asrWsUrl, vlm_ws_url: svc.vlmWsUrl } as ResolvedAddresses,
    apiKey,
    retry: NO_RETRY,
  });
});
t.teardown(() => svc.close());

function setup(name: string, connector: string, config: Record<string, unknown>) {
  const bus = new AgentBus();
  const events: ActionEv[] = [];
  bus.events$.subscribe((e) => e.type === 'action' && events.push(e));
  const entry: ActionConfig = { name, llm_label: name, connector, implementation: 'passthrough', config, exclude_from_prompt: false };
  // Motion (serial move) passes a safety governor; its dead-man timer is out of the way of these tests.
  const governor = startGovernor({ deadman_seconds: 600 }, { bus });
  t.teardown(() => governor.stop());
  const handle = createActionHandle(
    entry,
    { logger, bus, mode: 'm', stateDir: mkdtempSync(join(tmpdir(), 'cortexd-state-')), write: () => {}, cloud, plugins },
    { safety: governor.actor },
  );
  const settled = () =>
    firstValueFrom(bus.events$.pipe(filter((e): e is ActionEv => e.type === 'action' && ['done', 'failed', 'interrupted'].includes(e.state))));
  t.teardown(() => handle.stop());
  return { handle, events, settled, bus };
}

const clips = (dir: string) =>
  readdirSync(dir)
    .sort()
    .map((f) => ({ f, data: readFileSync(join(dir, f)) }));

t.test('local_tts: espeak-ng speech lands in the file speaker as WAV', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-audio-'));
  const { handle, settled } = setup('speak', 'local_tts', { voice: 'en-us', speaker: { binding: 'file', dir, realtime: false } });
  const done = settled();
  handle.dispatch({ sentence: 'Hello, I am a robot.' }, 'model');
  const ended = await done;
  t.equal(ended.state, 'done');
  t.equal(ended.cost_cu, undefined, 'espeak-ng on the robot costs nothing');
  const [clip] = clips(dir);
  t.match(clip!.f, /\.wav$/);
  t.ok(isWav(clip!.data));
  const wav = parseWav(clip!.data);
  t.ok(wav.data.length / (wav.rate * 2) > 0.5, 'more than half a second of speech');
});

t.test('local_tts: interrupt during real-time playback stops it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-audio-'));
  const { handle, settled, bus } = setup('speak', 'local_tts', { speaker: { binding: 'null', realtime: true } });
  const running = firstValueFrom(bus.events$.pipe(filter((e) => e.type === 'action' && e.state === 'running')));
  const end = settled();
  handle.dispatch({ sentence: 'This is a long sentence that would take several seconds to say out loud.' }, 'model');
  handle.dispatch({ sentence: 'And another one.' }, 'model');
  await running;
  handle.interrupt();
  t.equal((await end).state, 'interrupted');
  t.equal(handle.queueLength, 0);
  t.same(readdirSync(dir), []);
});

t.test('local_tts: the sentence is spoken by an espeak-ng started before it was asked for, and plays while it is still being made', async (t) => {
  // A wrapper that notes each start (a file of its own) and the text it was given, runs espeak-ng, then
  // keeps its output open until the test opens the gate: the synthesis has not ended before that.
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-warm-'));
  const gate = join(dir, 'gate');
  const wrapper = join(dir, 'espeak-wrapper');
  writeFileSync(wrapper, `#!/bin/sh\nlog=${dir}/start-$$\n: > "$log"\ntee "$log.text" | espeak-ng "$@"\nwhile [ ! -e ${gate} ]; do sleep 0.05; done\n`, {
    mode: 0o755,
  });
  t.teardown(() => writeFileSync(gate, ''));
  const out = join(dir, 'out');
  mkdirSync(out);
  const starts = () => readdirSync(dir).filter((f) => /^start-\d+$/.test(f));
  const until = async (what: string, cond: () => boolean) => {
    const deadline = Date.now() + 20_000;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`${what} within 20 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const { handle, settled } = setup('speak', 'local_tts', { command: wrapper, speaker: { binding: 'file', dir: out, realtime: false } });
  await until('no espeak-ng was started ahead', () => starts().length > 0);
  const before = starts();
  t.equal(before.length, 1, 'one espeak-ng waits before anything is said');
  const done = settled();
  handle.dispatch({ sentence: 'Hello, I am a robot.' }, 'model');
  await until('no audio reached the speaker while the synthesis was open', () => clips(out).some((c) => c.data.length > 4096));
  t.ok(!existsSync(gate), 'audio reached the speaker before the synthesis ended');
  writeFileSync(gate, '');
  t.equal((await done).state, 'done');
  t.match(readFileSync(join(dir, `${before[0]}.text`), 'utf8'), /Hello, I am a robot\./, 'the process started ahead spoke the sentence');
  const [clip] = clips(out);
  t.ok(isWav(clip!.data));
  t.ok(parseWav(clip!.data).data.length / (22050 * 2) > 0.5, 'more than half a second of speech in the file');
  t.ok(starts().length >= 2, 'the taken process is replaced by a new one at once');
  await handle.stop();
});

t.test('local_tts: a program that cannot run is a failed action that names it', async (t) => {
  const { handle, settled } = setup('speak', 'local_tts', { command: '/nonexistent/espeak-ng', speaker: { binding: 'null' } });
  const done = settled();
  handle.dispatch({ sentence: 'Hello.' }, 'model');
  const ended = await done;
  t.equal(ended.state, 'failed');
  t.match(ended.error, /cannot run \/nonexistent\/espeak-ng/);
});

t.test('speechlab_tts and speechb_tts: audio from the local service, played into the file speaker', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-audio-'));
  const a = setup('speak', 'speechlab_tts', { speaker: { binding: 'file', dir, realtime: false } });
  let done = a.settled();
  a.handle.dispatch({ sentence: 'Hello from the lab.' }, 'model');
  const first = await done;
  t.equal(first.state, 'done');
  // The CU the service charged for the synthesis (30000 CU per 1M characters, rounded up per request) is on the done event.
  t.equal(first.cost_cu, ttsCost('speechlab', 'Hello from the lab.'.length));
  const b = setup('speak', 'speechb_tts', { speaker: { binding: 'file', dir, realtime: false } });
  done = b.settled();
  b.handle.dispatch({ sentence: 'Hello from b.' }, 'model');
  const second = await done;
  t.equal(second.state, 'done');
  t.equal(second.cost_cu, ttsCost('speechb', 'Hello from b.'.length));
  const charged = svc.admin.usage(keyId).filter((r) => r.kind === 'tts');
  t.equal(charged.length, 2, 'the service metered both syntheses');
  t.ok(
    a.events.every((e) => e.state === 'done' || e.cost_cu === undefined),
    'only the last event of a command carries its cost',
  );
  const got = readdirSync(dir).sort();
  t.equal(got.length, 2);
  t.match(got[0], /\.raw$/, 'speechlab default pcm_22050 is raw PCM');
  t.ok(readFileSync(join(dir, got[0]!)).length > 22050, 'about a second of 16-bit audio or more');
  t.ok(isWav(readFileSync(join(dir, got[1]!))), 'speechb audio is WAV');
});

t.test('speechlab_tts without a service fails with a clear error', async (t) => {
  const bus = new AgentBus();
  const entry: ActionConfig = {
    name: 'speak',
    llm_label: 'speak',
    connector: 'speechlab_tts',
    implementation: 'passthrough',
    config: { speaker: { binding: 'null' } },
    exclude_from_prompt: false,
  };
  const handle = createActionHandle(entry, { logger, bus, mode: 'm', stateDir: tmpdir(), write: () => {}, plugins });
  const failed = firstValueFrom(bus.events$.pipe(filter((e): e is ActionEv => e.type === 'action' && e.state === 'failed')));
  handle.dispatch({ sentence: 'hi' }, 'model');
  t.match((await failed).error, /needs the hosted or embedded service/);
  await handle.stop();
});

/** A socat pty pair: the robot's end and the controller's end. */
async function ptyPair(): Promise<{ robot: string; controller: string; proc: ChildProcess }> {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-pty-'));
  const robot = join(dir, 'robot');
  const controller = join(dir, 'controller');
  const proc = spawn('socat', [`pty,raw,echo=0,link=${robot}`, `pty,raw,echo=0,link=${controller}`], { stdio: 'ignore' });
  t.teardown(() => void proc.kill('SIGTERM'));
  const deadline = Date.now() + 5000;
  while (!(existsSync(robot) && existsSync(controller))) {
    if (Date.now() > deadline) throw new Error('socat did not create the pty pair');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { robot, controller, proc };
}

/** The motor controller: answers `OK`, or `ERR ...` for dances, and says nothing for `MOVE sit`. */
function controller(path: string): Promise<{ got: string[]; port: SerialPort }> {
  return new Promise((resolve, reject) => {
    const port = new SerialPort({ path, baudRate: 115200 }, (err) => (err ? reject(err) : resolve({ got, port })));
    const got: string[] = [];
    port.pipe(new ReadlineParser({ delimiter: '\n' })).on('data', (line: string) => {
      got.push(line);
      port.write('TELEMETRY battery=87\n'); // noise the protocol must ignore
      if (line === 'MOVE dance') port.write('ERR not while charging\n');
      else if (line !== 'MOVE sit' && line !== 'STOP') port.write('OK\r\n');
    });
    t.teardown(() => new Promise<void>((r) => (port.isOpen ? port.close(() => r()) : r())));
  });
}

t.test('serial move: MOVE <action> lines, OK and ERR answers, timeout, STOP on interrupt', async (t) => {
  const pty = await ptyPair();
  const peer = await controller(pty.controller);
  const { handle, settled, bus } = setup('move', 'serial', { path: pty.robot, ack_timeout_seconds: 0.5 });
  let end = settled();
  handle.dispatch({ action: 'turn left' }, 'model');
  t.equal((await end).state, 'done');
  end = settled();
  handle.dispatch({ action: 'dance' }, 'model');
  t.match((await end).error, /move refused by the controller: not while charging/);
  end = settled();
  handle.dispatch({ action: 'sit' }, 'model');
  t.match((await end).error, /no answer from the controller .* within 0.5 s/);
  const running = firstValueFrom(bus.events$.pipe(filter((e) => e.type === 'action' && e.state === 'running')));
  end = settled();
  handle.dispatch({ action: 'sit' }, 'model');
  await running;
  handle.interrupt();
  t.equal((await end).state, 'interrupted');
  const deadline = Date.now() + 2000;
  while (!peer.got.includes('STOP') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.same(peer.got, ['MOVE turn left', 'MOVE dance', 'MOVE sit', 'MOVE sit', 'STOP']);
});

t.test(
  'serial move: stopping the action (a mode left) sends STOP before its device:serial session lets go of the port; its states are on the bus',
  async (t) => {
    const pty = await ptyPair();
    const peer = await controller(pty.controller);
    const { handle, settled, bus } = setup('move', 'serial', { path: pty.robot });
    const states: string[] = [];
    bus.events$.subscribe((e) => e.type === 'stream' && e.kind === 'serial' && e.input === 'move' && states.push(e.state));
    const end = settled();
    handle.dispatch({ action: 'turn left' }, 'model');
    t.equal((await end).state, 'done');
    const line = sharedSerialLine({ binding: 'serialport', path: pty.robot, baud_rate: 115200 });
    t.ok(line.port()?.isOpen, 'the port is open while the action runs');
    await handle.stop();
    const deadline = Date.now() + 5000;
    while (line.port() !== undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    t.equal(line.port(), undefined, 'the port closed with the action');
    while (!peer.got.includes('STOP') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    t.same(peer.got, ['MOVE turn left', 'STOP'], 'the STOP went out before the port closed');
    // Its first `connecting` went out as the action started, before this test listened.
    t.same(states, ['streaming', 'stopped'], 'the session streamed, then said stopped');
  },
);

t.test('serial face: FACE <emotion>', async (t) => {
  const pty = await ptyPair();
  const peer = await controller(pty.controller);
  const { handle, settled } = setup('face', 'serial', { path: pty.robot });
  const end = settled();
  handle.dispatch({ emotion: 'joy' }, 'model');
  t.equal((await end).state, 'done');
  t.same(peer.got, ['FACE joy']);
});

t.test('websim face: the done event on the bus carries the expression', async (t) => {
  const { handle, settled } = setup('face', 'websim', {});
  const end = settled();
  handle.dispatch({ emotion: 'surprised' }, 'model');
  const ev = await end;
  t.match(ev, { state: 'done', name: 'face', connector: 'websim', value: { emotion: 'surprised' } });
});
