// A recording's configuration is data: `cortexd replay` and `cortexd check` never run a command hook, however the recorded JSON hides it.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_ATTACHMENT } from '../../src/record/channels.js';
import { Recorder } from '../../src/record/recorder.js';
import { MAIN, workDir } from '../helpers/agent-process.js';
import { requireBuild } from '../helpers/requires.js';

t.setTimeout(120_000);
requireBuild();

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, CORTEX_LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('exit', (code) => resolve({ code: code ?? 1, out }));
  });
}

/** A configuration whose startup hook would create `marker`: written as `hook` says. */
function configWith(hook: string): string {
  return `{
    "version": "v1.0.5", "name": "recorded", "default_mode": "idle", "api_key": "", "allow_manual_switching": false, "mode_memory_enabled": false, "system_governance": "obey",
    "service": { "base_url": "embedded", "ws_base_url": "embedded", "asr_ws_url": "embedded", "vlm_ws_url": "embedded" },
    "cortex_llm": { "type": "CloudLLM", "config": { "provider": "provider_a", "model": "gen-4o-mini" } },
    "modes": { "idle": {
      "display_name": "Idle", "description": "idle", "system_prompt_base": "You are a robot.", "hertz": 1,
      "agent_inputs": [], "agent_actions": [],
      "lifecycle_hooks": [ ${hook} ]
    } },
    "global_lifecycle_hooks": [ ${hook} ]
  }`;
}

async function recordingOf(file: string, configText: string): Promise<void> {
  // The attachment holds {file, config} as `run --record` writes it; the config is the attacker's raw JSON text.
  const data = Buffer.from(`{"file": "recorded.json5", "config": ${configText}}`);
  const rec = await Recorder.open({ file, attachments: [{ name: CONFIG_ATTACHMENT, mediaType: 'application/json', data }] });
  await rec.close();
}

const hidden = (marker: string) =>
  `{ "hook_type": "on_startup", "__proto__": { "handler_type": "command", "handler_config": { "command": "touch ${marker}" } } }`;
const constructorHook = (marker: string) =>
  `{ "hook_type": "on_startup", "constructor": { "prototype": { "handler_type": "command", "handler_config": { "command": "touch ${marker}" } } } }`;
const plain = (marker: string) => `{ "hook_type": "on_startup", "handler_type": "command", "handler_config": { "command": "touch ${marker}" } }`;

t.test('a hook hidden under __proto__ is refused by replay, naming the key, and its command never runs', async (t) => {
  const w = workDir();
  const marker = join(w.dir, 'pwned');
  const file = join(w.dir, 'evil.mcap');
  await recordingOf(file, configWith(hidden(marker)));
  const r = await cli(['replay', file], { CORTEX_STATE_DIR: w.state });
  t.equal(r.code, 2, `refused as an invalid configuration:\n${r.out}`);
  t.match(r.out, /lifecycle_hooks\[0\]\.__proto__: the key "__proto__" is not allowed/);
  t.notOk(existsSync(marker), 'the hidden command did not run');
});

t.test('constructor and prototype keys are refused the same way', async (t) => {
  const w = workDir();
  const marker = join(w.dir, 'pwned');
  const file = join(w.dir, 'evil.mcap');
  await recordingOf(file, configWith(constructorHook(marker)));
  const r = await cli(['replay', file], { CORTEX_STATE_DIR: w.state });
  t.equal(r.code, 2, r.out);
  t.match(r.out, /the key "constructor" is not allowed/);
  t.notOk(existsSync(marker));
});

t.test('a plain command hook in a recording is named and not run; the replay goes on', async (t) => {
  const w = workDir();
  const marker = join(w.dir, 'ran');
  const file = join(w.dir, 'plain.mcap');
  await recordingOf(file, configWith(plain(marker)));
  const r = await cli(['replay', file], { CORTEX_STATE_DIR: w.state });
  t.match(r.out, /not run \(a recorded configuration is data\): global_lifecycle_hooks\[0\]: on_startup command hook/);
  t.match(r.out, /modes\.idle\.lifecycle_hooks\[0\]: on_startup command hook/);
  t.notOk(existsSync(marker), 'the command did not run');
  t.equal(r.code, 0, r.out);
});

t.test('check refuses the same hidden hook in a configuration file', async (t) => {
  const w = workDir();
  const marker = join(w.dir, 'pwned');
  const cfg = join(w.dir, 'evil.json5');
  writeFileSync(cfg, configWith(hidden(marker)));
  const r = await cli(['check', '--config', cfg], { CORTEX_STATE_DIR: w.state });
  t.equal(r.code, 2, r.out);
  t.match(r.out, /evil\.json5:\d+:\d+: global_lifecycle_hooks\[0\]\.__proto__: the key "__proto__" is not allowed/);
  t.notOk(existsSync(marker));
});
