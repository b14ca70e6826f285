// Proves each doctor check reports ok / warn / fail with a fix on this machine (no camera, no sound card) and against real local peers.
import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../../src/config/schema.js';
import { checkAddresses, checkApiKey } from '../../src/doctor/config.js';
import { checkCamera, checkMicrophone, checkSerial, checkSpeaker } from '../../src/doctor/devices.js';
import { deviceNeeds, type DeviceNeeds } from '../../src/config/device-needs.js';
import { checkNode, checkPackages, checkStateDir } from '../../src/doctor/system.js';

const none: DeviceNeeds = { configured: true, serial: [] };
const hasSoundCard = /^card \d+:/m.test(spawnSync('arecord', ['-l'], { encoding: 'utf8' }).stdout ?? '');
const hasCamera = existsSync('/dev/video0');

function tmp(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-doctor-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A directory holding fake programs, for a PATH where the recorder reports a card and records. */
function fakeBin(dir: string, programs: Record<string, string>): string {
  for (const [name, body] of Object.entries(programs)) {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

/** A minimal loaded-config shape for deviceNeeds: one mode with the given inputs, actions and model. */
function config(
  inputs: Array<{ type: string; config?: Record<string, unknown> }>,
  actions: Array<{ name: string; connector: string; config?: Record<string, unknown> }> = [],
  llm?: { type: string; config: Record<string, unknown> },
): AgentConfig {
  return {
    modes: {
      main: {
        agent_inputs: inputs.map((i) => ({ type: i.type, config: i.config ?? {} })),
        agent_actions: actions.map((a) => ({
          name: a.name,
          llm_label: a.name,
          implementation: 'passthrough',
          connector: a.connector,
          config: a.config ?? {},
          exclude_from_prompt: false,
        })),
        simulators: [],
        ...(llm ? { cortex_llm: llm } : {}),
      },
    },
  } as unknown as AgentConfig;
}

t.test("deviceNeeds asks each plugin's descriptor what its config block uses, and simulations use nothing", async (t) => {
  const real = deviceNeeds(
    config(
      [
        { type: 'SpeechlabASRInput', config: { microphone: { binding: 'recorder', recorder: 'arecord', device: 'plughw:1,0' } } },
        { type: 'VLMInput', config: { camera: { binding: 'opencv', device: 2 } } },
        { type: 'SerialReader', config: { path: '/dev/ttyUSB0' } },
        { type: 'GpsInput', config: { serial_port: '/dev/serial/by-id/gps' } },
      ],
      [
        { name: 'speak', connector: 'local_tts' },
        { name: 'move', connector: 'serial', config: { path: '/dev/ttyACM1' } },
      ],
      { type: 'MultiLLM', config: { models: [{ type: 'CloudLLM' }, { type: 'LocalLLM', config: { base_url: 'http://127.0.0.1:8080/v1' } }] } },
    ),
  );
  t.same(real.microphone, { recorder: 'arecord', device: 'plughw:1,0', reason: 'modes.main.agent_inputs[0] (SpeechlabASRInput)' });
  t.same(real.camera, { device: 2, reason: 'modes.main.agent_inputs[1] (VLMInput)' });
  t.same(
    real.serial,
    ['/dev/serial/by-id/gps', '/dev/ttyACM1', '/dev/ttyUSB0'],
    'ports of inputs (serial_port wins over the default path) and of the move connector',
  );
  t.same(real.speaker, { reason: 'modes.main.agent_actions[0] (speak local_tts)' });
  t.same(real.network, [{ url: 'http://127.0.0.1:8080/v1', reason: 'modes.main.cortex_llm (MultiLLM)' }], "a MultiLLM member's local server");

  const defaults = deviceNeeds(
    config(
      [{ type: 'VLMInput' }, { type: 'SpeechbASRInput' }],
      [{ name: 'speak', connector: 'speechlab_tts', config: { speaker: { binding: 'player', player: 'paplay' } } }],
    ),
  );
  t.same(defaults.camera, { device: 0, reason: 'modes.main.agent_inputs[0] (VLMInput)' }, 'a camera block left out is the default OpenCV camera 0');
  t.same(defaults.microphone, { recorder: 'arecord', reason: 'modes.main.agent_inputs[1] (SpeechbASRInput)' }, 'and the default recorder');
  t.same(defaults.speaker, { player: 'paplay', reason: 'modes.main.agent_actions[0] (speak speechlab_tts)' });

  const sim = deviceNeeds(
    config(
      [
        { type: 'SpeechlabASRInput', config: { microphone: { binding: 'replay', file: 'a.wav' } } },
        { type: 'VLMInput', config: { camera: { binding: 'synthetic' } } },
        { type: 'LocalVLMInput', config: { camera: { binding: 'file', file: 'a.mp4' } } },
        { type: 'SerialReader', config: { binding: 'mock', path: '/dev/ROBOT' } },
        { type: 'TextInput' },
      ],
      [
        { name: 'speak', connector: 'console' },
        { name: 'speak', connector: 'local_tts', config: { speaker: { binding: 'null' } } },
        { name: 'face', connector: 'websim' },
      ],
    ),
  );
  // The hosted-API addresses they call (`services`) are not hardware.
  const { services: _services, ...hardware } = sim;
  t.same(hardware, { configured: true, serial: [] }, 'replay, synthetic and file cameras, the serial mock, console, websim and a null speaker use no hardware');
  t.same(
    deviceNeeds(config([{ type: 'GoogleASRInput' }, { type: 'VLMInput', config: { camera: 'front' } }])),
    { configured: true, serial: [] },
    'an unknown type or a block its schema refuses contributes nothing (check fails them)',
  );
});

t.test('microphone on this machine: fail when used, warn when not', { skip: hasSoundCard && 'this machine has a sound card' }, async (t) => {
  const used = await checkMicrophone({ ...none, microphone: { reason: 'modes.main.agent_inputs[0]' } });
  t.equal(used.status, 'fail');
  t.match(used.detail, /no capture device.*needed by modes\.main\.agent_inputs\[0\]/);
  t.match(used.fix, /arecord -l/);
  const unused = await checkMicrophone(none);
  t.equal(unused.status, 'warn');
  t.match(unused.detail, /the configuration does not use it/);
  const speaker = await checkSpeaker({ ...none, speaker: { reason: 'speak' } });
  t.equal(speaker.status, 'fail');
  t.match(speaker.detail, /no playback device/);
});

t.test('microphone with a capture device that records is ok; a recorder missing from PATH fails', async (t) => {
  const bin = fakeBin(tmp(t), {
    arecord: 'case "$1" in -l) echo "card 1: USB [USB Audio], device 0: USB Audio [USB Audio]";; *) exit 0;; esac',
  });
  const r = await checkMicrophone({ ...none, microphone: { reason: 'x', device: 'plughw:1,0' } }, { env: { PATH: bin } });
  t.equal(r.status, 'ok', r.detail);
  t.match(r.detail, /arecord records from plughw:1,0/);
  const busy = fakeBin(tmp(t), {
    arecord: 'case "$1" in -l) echo "card 1: USB";; *) echo "arecord: main:830: audio open error: Device or resource busy" >&2; exit 1;; esac',
  });
  const b = await checkMicrophone({ ...none, microphone: { reason: 'x' } }, { env: { PATH: busy } });
  t.equal(b.status, 'fail');
  t.match(b.detail, /Device or resource busy/);
  const nothing = await checkMicrophone({ ...none, microphone: { reason: 'x', recorder: 'sox' } }, { env: { PATH: tmp(t) } });
  t.equal(nothing.status, 'fail');
  t.match(nothing.detail, /no recorder on PATH \(sox\)/);
  t.match(nothing.fix, /apt-get install/);
});

t.test('camera on this machine: fail when used, warn when not', { skip: hasCamera && 'this machine has /dev/video0' }, async (t) => {
  const used = await checkCamera({ ...none, camera: { device: 0, reason: 'modes.main.agent_inputs[1]' } });
  t.equal(used.status, 'fail');
  t.match(used.detail, /\/dev\/video0 does not exist \(no video devices\); needed by/);
  t.match(used.fix, /video group/);
  const unused = await checkCamera({ configured: false, serial: [] });
  t.equal(unused.status, 'warn');
  t.match(unused.detail, /no configuration loaded/);
});

t.test('camera: a real OpenCV capture of a video file delivers a frame', async (t) => {
  const dir = tmp(t);
  const video = join(dir, 'cam.avi');
  const ff = spawnSync('ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=5', '-t', '1', '-c:v', 'mjpeg', video]);
  t.equal(ff.status, 0, 'ffmpeg (a listed system package) made a test video');
  const r = await checkCamera({ ...none, camera: { device: video, reason: 'x' } });
  t.equal(r.status, 'ok', r.detail);
  t.match(r.detail, /delivered a 320x240 frame/);
  const broken = join(dir, 'broken.avi');
  writeFileSync(broken, 'not a video');
  const b = await checkCamera({ ...none, camera: { device: broken, reason: 'x' } });
  t.equal(b.status, 'fail');
  t.match(b.detail, /did not deliver a frame/);
});

t.test('serial: a pty pair from socat opens; a missing port fails', async (t) => {
  const dir = tmp(t);
  const a = join(dir, 'ttyA');
  const socat = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${join(dir, 'ttyB')}`], { stdio: 'ignore' });
  t.teardown(() => socat.kill('SIGTERM'));
  const deadline = Date.now() + 10_000;
  while (!existsSync(a)) {
    if (Date.now() > deadline || socat.exitCode !== null) return t.fail('socat made no pty');
    await new Promise((r) => setTimeout(r, 20));
  }
  const results = await checkSerial({ ...none, serial: [a, join(dir, 'ttyUSB9')] });
  t.same(
    results.map((r) => r.status),
    ['ok', 'fail'],
  );
  t.match(results[1]!.detail, /does not exist/);
  t.match(results[1]!.fix, /dialout/);
  t.same(
    (await checkSerial(none)).map((r) => r.status),
    ['ok'],
    'no ports named: nothing to fail',
  );
});

t.test('API key: embedded needs none; missing and placeholder keys fail with the fix', async (t) => {
  const embedded = { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' } as const;
  const hosted = { ...embedded, base_url: 'https://api.example.com' };
  const loaded = (apiKey: string) => ({ apiKey }) as never;
  t.equal(checkApiKey(loaded(''), {}, embedded).status, 'ok');
  t.equal(checkApiKey(loaded(''), {}, hosted).status, 'fail');
  const free = checkApiKey(loaded('openmind_free'), {}, hosted);
  t.equal(free.status, 'fail');
  t.match(free.detail, /openmind_free/);
  t.match(free.fix, /OM_API_KEY/);
  t.equal(checkApiKey(loaded('sk-123'), {}, hosted).status, 'fail');
  const good = checkApiKey(loaded('key_live_abcdef123456'), {}, hosted);
  t.equal(good.status, 'ok');
  t.notMatch(good.detail, /abcdef123456/, 'the secret is not printed');
  t.equal(checkApiKey(undefined, {}, undefined).status, 'warn', 'no configuration: only a warning');
});

t.test('addresses: a listening peer answers, a closed port fails quickly, embedded needs no network', async (t) => {
  const server = createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const open = (server.address() as { port: number }).port;
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const closed = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));

  const env = { CORTEX_BASE_URL: `http://127.0.0.1:${open}`, CORTEX_ASR_WS_URL: `ws://127.0.0.1:${closed}/asr`, CORTEX_VLM_WS_URL: 'embedded' };
  const { results } = await checkAddresses(undefined, env, 1000);
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  t.equal(byName[`reach http://127.0.0.1:${open}`]?.status, 'ok');
  t.match(byName[`reach http://127.0.0.1:${open}`]?.detail, /base_url/);
  t.equal(byName[`reach ws://127.0.0.1:${closed}`]?.status, 'fail');
  t.match(byName[`reach ws://127.0.0.1:${closed}`]?.detail, /ECONNREFUSED/);
  const embedded = await checkAddresses(undefined, { CORTEX_BASE_URL: 'embedded' }, 1000);
  t.same(
    embedded.results.map((r) => r.status),
    ['ok'],
  );
  t.match(embedded.results[0]!.detail, /embedded/);
  const bad = await checkAddresses(undefined, { CORTEX_BASE_URL: 'ftp://x' }, 1000);
  t.equal(bad.results[0]!.status, 'fail');
  // A local model server is reached because the LocalLLM descriptor says the plugin calls it.
  const allEmbedded = { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' };
  const local = { addresses: allEmbedded, config: config([], [], { type: 'LocalLLM', config: { base_url: `http://127.0.0.1:${open}/v1` } }) } as never;
  const reached = (await checkAddresses(local, {}, 1000)).results.find((r) => r.name === `reach http://127.0.0.1:${open}`);
  t.equal(reached?.status, 'ok');
  t.match(reached?.detail, /answers \(modes\.main\.cortex_llm \(LocalLLM\)\)/);
});

t.test('machine checks: Node version, state directory, packages', async (t) => {
  t.equal(checkNode('20.1.0').status, 'ok');
  t.equal(checkNode('18.19.0').status, 'fail');
  const dir = tmp(t);
  t.equal(checkStateDir(join(dir, 'state')).status, 'ok');
  writeFileSync(join(dir, 'file'), '');
  const blocked = checkStateDir(join(dir, 'file', 'state'));
  t.equal(blocked.status, 'fail');
  t.match(blocked.fix, /CORTEX_STATE_DIR/);
  const pk = await checkPackages(['coreutils', 'cortexd-no-such-package']);
  if (pk.detail.includes('dpkg-query not found')) return;
  t.equal(pk.status, 'warn');
  t.match(pk.detail, /missing: cortexd-no-such-package/);
  t.equal(pk.fix, 'sudo apt-get install cortexd-no-such-package');
});
