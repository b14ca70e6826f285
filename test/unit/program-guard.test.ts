// The program guard lists every program a configuration could start and refuses what the local allowlist does not name exactly; the local reload policy comes from the robot's file and environment only.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentConfig } from '../../src/config/schema.js';
import { AllowedPrograms, describeUse, listPrograms, refusedPrograms } from '../../src/config/program-guard.js';
import { fleetReloadRefusal, programRefusal, readReloadPolicy, ReloadPolicyError } from '../../src/fleet/reload.js';
import { untrustedBecause } from '../../src/config/watch.js';

const hook = (hook_type: string, handler_type: string, handler_config: Record<string, unknown>) => ({ hook_type, handler_type, handler_config });

function config(extra: { fleet?: Record<string, unknown> } = {}): AgentConfig {
  return AgentConfig.parse({
    version: 'v1.0.5',
    name: 'g',
    default_mode: 'a',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    global_lifecycle_hooks: [hook('on_startup', 'command', { command: "/bin/sh -c 'id > /tmp/x'" })],
    modes: {
      a: {
        display_name: 'A',
        description: '',
        system_prompt_base: '',
        hertz: 1,
        lifecycle_hooks: [hook('on_entry', 'message', { message: 'hi' }), hook('on_entry', 'function', { function: 'notify.send', args: { channel: 'ops' } })],
        mcp_servers: [
          { name: 'fs', transport: 'stdio', command: '/usr/bin/tools', args: ['--root', '/'], env: { LD_PRELOAD: '/tmp/evil.so' } },
          { name: 'web', transport: 'http', url: 'http://127.0.0.1:9/mcp' },
        ],
        agent_actions: [
          { name: 'speak', llm_label: 'speak', connector: 'local_tts', config: { command: '/tmp/evil' } },
          { name: 'speak2', llm_label: 'speak2', connector: 'local_tts', config: { command: 'espeak-ng' } },
        ],
      },
    },
    ...(extra.fleet ? { fleet: extra.fleet } : {}),
  });
}

t.test('every program a configuration could start, with where it is written', async (t) => {
  const uses = listPrograms(config());
  t.same(
    uses.map((u) => [u.kind, u.where]),
    [
      ['command hook', 'global_lifecycle_hooks[0] (on_startup command hook)'],
      ['function hook', 'modes.a.lifecycle_hooks[1] (on_entry function hook)'],
      ['MCP stdio server', 'modes.a.mcp_servers[0] (fs)'],
      ['speech program', 'modes.a.agent_actions[0] (speak).config.command'],
    ],
    'message hooks, http servers and the built-in espeak-ng start nothing of the configuration',
  );
  t.match(uses[0], { program: '/bin/sh', args: ['-c', 'id > /tmp/x'] });
  t.equal(refusedPrograms(config(), []).length, 4, 'an empty allowlist refuses them all');
  t.match(
    describeUse(uses[2]!),
    /modes\.a\.mcp_servers\[0\] \(fs\): MCP stdio server \["\/usr\/bin\/tools" "--root" "\/"\] with env LD_PRELOAD is not in this robot's allowlist/,
  );
  t.notMatch(describeUse(uses[2]!), /evil\.so/, 'env values (they may be secrets) are not printed');
});

t.test('an entry allows exactly one program: same path, arguments, environment; a function with the same args', async (t) => {
  const allow = AllowedPrograms.parse([
    { program: '/bin/sh', args: ['-c', 'id > /tmp/x'] },
    { function: 'notify.send', args: { channel: 'ops' } },
    { program: '/usr/bin/tools', args: ['--root', '/'] },
    { program: '/tmp/evil' },
  ]);
  const refused = refusedPrograms(config(), allow);
  t.same(
    refused.map((u) => u.where),
    ['modes.a.mcp_servers[0] (fs)'],
    'the MCP server with an extra environment variable is another program',
  );
  t.same(refusedPrograms(config(), AllowedPrograms.parse([{ program: 'sh', args: ['-c', 'id > /tmp/x'] }])).length, 4, 'no PATH look-up: sh is not /bin/sh');
  t.same(refusedPrograms(config(), AllowedPrograms.parse([{ function: 'notify.send' }])).length, 4, 'other function args: refused');
  t.throws(() => AllowedPrograms.parse([{ program: '/bin/x', argv: [] }]), 'unknown fields in an entry are an error, not ignored');
});

t.test('device strings that can run or write something are programs too: ALSA file/pipe plugins, camera pipelines and URLs', async (t) => {
  const cfg = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'd',
    default_mode: 'a',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    modes: {
      a: {
        display_name: 'A',
        description: '',
        system_prompt_base: '',
        hertz: 1,
        agent_inputs: [
          { type: 'SpeechInput', config: { microphone: { binding: 'recorder', device: 'plughw:1,0' } } },
          { type: 'SpeechInput', config: { microphone: { device: 'file:"|/bin/sh -c id",raw' } } },
          { type: 'VisionInput', config: { camera: { binding: 'opencv', device: '/dev/video2' } } },
          { type: 'VisionInput', config: { camera: { device: 'videotestsrc ! filesink location=/root/.bashrc' } } },
          { type: 'VisionInput', config: { camera: { device: 0 } } },
        ],
        agent_actions: [
          { name: 'speak', llm_label: 'speak', connector: 'local_tts', config: { speaker: { binding: 'player', device: 'hw:CARD=Device,DEV=0' } } },
          { name: 'speak2', llm_label: 'speak2', connector: 'local_tts', config: { speaker: { device: 'file:/home/robot/.profile' } } },
        ],
      },
    },
  });
  const uses = listPrograms(cfg);
  t.same(
    uses.map((u) => u.where),
    [
      'modes.a.agent_inputs[1] (SpeechInput).config.microphone.device',
      'modes.a.agent_inputs[3] (VisionInput).config.camera.device',
      'modes.a.agent_actions[1] (speak2).config.speaker.device',
    ],
    'card names, /dev/video* and indexes are not; a pipe, a file and a GStreamer pipeline are',
  );
  t.match(describeUse(uses[0]!), /device "file:\\"\|\/bin\/sh -c id\\",raw" is not in this robot's allowlist/);
  t.same(refusedPrograms(cfg, AllowedPrograms.parse([{ device: 'videotestsrc ! filesink location=/root/.bashrc' }])).length, 2);
});

t.test('the local policy: the startup file and the environment, never a pushed file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'allow-'));
  const file = join(dir, 'programs.json5');
  writeFileSync(file, `{ allowed_programs: [{ program: "/usr/bin/tools", args: ["--root", "/"], env: { LD_PRELOAD: "/tmp/evil.so" } }] }`);
  const startup = config({ fleet: { enabled: false, allowed_programs: [{ program: '/tmp/evil' }] } });
  const policy = readReloadPolicy(startup, { CORTEX_ALLOWED_PROGRAMS: file });
  t.equal(policy.allow.length, 2);
  t.equal(policy.fleetReload, true);
  t.same(fleetReloadRefusal(policy), undefined);
  const r = programRefusal(config(), policy, 'robot');
  t.match(r, {
    ok: false,
    reason: /would start 2 programs this robot does not allow \(allowlist: fleet\.allowed_programs of the startup configuration, CORTEX_ALLOWED_PROGRAMS=/,
  });
  t.equal(r?.lines?.length, 2);

  const off = readReloadPolicy(config({ fleet: { enabled: false, reload: false } }), {});
  t.match(fleetReloadRefusal(off), { ok: false, reason: /turned off on this robot \(fleet\.reload of the startup configuration\)/ });
  t.equal(readReloadPolicy(config({ fleet: { enabled: false, reload: false } }), { CORTEX_FLEET_RELOAD: 'on' }).fleetReload, true, 'the environment wins');
  t.throws(() => readReloadPolicy(config(), { CORTEX_FLEET_RELOAD: 'maybe' }), ReloadPolicyError);
  writeFileSync(file, '[{ program: 3 }]');
  t.throws(() => readReloadPolicy(config(), { CORTEX_ALLOWED_PROGRAMS: file }), { message: /CORTEX_ALLOWED_PROGRAMS=.*programs\.json5: \[0/ });
  t.throws(() => readReloadPolicy(config(), { CORTEX_ALLOWED_PROGRAMS: join(dir, 'missing') }), { message: /file not found/ });
});

t.test('a watched file is the robot own only when the service user owns it and nobody else may write it', async (t) => {
  t.equal(untrustedBecause({ uid: 1000, mode: 0o100644 }, 1000), undefined);
  t.equal(untrustedBecause({ uid: 1000, mode: 0o100600 }, 1000), undefined);
  t.match(untrustedBecause({ uid: 1000, mode: 0o100666 }, 1000), /writable by every user \(mode 0666\)/);
  t.match(untrustedBecause({ uid: 1000, mode: 0o100664 }, 1000), /writable by its group \(mode 0664\)/);
  t.match(untrustedBecause({ uid: 1001, mode: 0o100644 }, 1000), /owned by uid 1001, not by the service user \(uid 1000\)/);
});
