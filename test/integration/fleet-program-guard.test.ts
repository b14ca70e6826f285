// A pushed configuration is data: a fleet reload (real mosquitto, real agent) or a --watch save of a file another user can write starts no program the robot's own allowlist does not name.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { startAgent, workDir } from '../helpers/agent-process.js';
import { USERS, Watcher, agentConfig, fleetBroker, fleetCli } from '../helpers/fleet.js';
import { haveMosquitto } from '../support/mosquitto.js';
import type { AgentEvent } from '../../src/cortex/events.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;
requireBuild();
if (!haveMosquitto()) throw new Error('mosquitto, mosquitto_passwd and openssl are missing (bash scripts/setup.sh --tests installs them)');

/** `base` with an on_startup command hook in mode idle and, when given, an MCP stdio server. */
function withPrograms(base: string, o: { command?: string; mcp?: { command: string; args: string[] } }): string {
  const hooks = o.command
    ? `lifecycle_hooks: [{ hook_type: "on_entry", handler_type: "command", handler_config: { command: ${JSON.stringify(o.command)} } }],`
    : '';
  const mcp = o.mcp
    ? `mcp_servers: [{ name: "tools", transport: "stdio", command: ${JSON.stringify(o.mcp.command)}, args: ${JSON.stringify(o.mcp.args)} }],`
    : '';
  return base.replace('idle: { display_name: "Idle",', `idle: { display_name: "Idle", ${hooks} ${mcp}`);
}

/** Resolves when `file` exists; rejects after `ms` (a hang guard). */
async function fileAppears(file: string, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > until) throw new Error(`${file} did not appear within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('fleet reload: an evil configuration runs nothing and is refused with the names; an allowlisted one runs', async (t) => {
  const broker = await fleetBroker();
  t.teardown(() => broker.stop());
  const watcher = await Watcher.start(broker.url);
  t.teardown(() => watcher.close());
  const w = workDir();
  const marks = { hook: w.file('hook-ran'), mcp: w.file('mcp-ran'), alsa: w.file('alsa-ran'), allowed: w.file('allowed-ran') };
  const fleet = {
    url: broker.url,
    username: 'r1',
    robot_id: 'r1',
    metrics_interval_seconds: 0,
    // The robot's own file allows exactly one program.
    allowed_programs: [{ program: '/usr/bin/touch', args: [marks.allowed] }],
  };
  const config = agentConfig({ socket: w.socket, fleet });
  const file = w.file('robot.json5');
  writeFileSync(file, config);
  const agent = startAgent(file, w.state, ['--for', '90s'], { CORTEX_MQTT_PASSWORD: USERS.r1 });
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await watcher.waitFor((m) => m.topic === 'cortexd/r1/state', 20_000, 'state');
  const cli = { CORTEX_MQTT_URL: broker.url };

  // The audit's attack: a command hook and an MCP stdio server, and the pushed file "allowing" them itself.
  const evil = w.file('evil.json5');
  const evilFleet = {
    ...fleet,
    allowed_programs: [
      { program: '/usr/bin/touch', args: [marks.hook] },
      { program: '/usr/bin/touch', args: [marks.mcp] },
    ],
  };
  // And a speaker whose ALSA device pipes to a program (`aplay -D 'file:"|cmd"'` runs cmd).
  const alsa = `file:"|/usr/bin/touch ${marks.alsa}",raw`;
  writeFileSync(
    evil,
    withPrograms(agentConfig({ socket: w.socket, fleet: evilFleet }), {
      command: `/usr/bin/touch ${marks.hook}`,
      mcp: { command: '/usr/bin/touch', args: [marks.mcp] },
    }).replace(
      'connector: "console" }]',
      `connector: "local_tts", config: { speaker: { binding: "player", player: "aplay", device: ${JSON.stringify(alsa)} } } }]`,
    ),
  );
  const refused = await fleetCli(['reload', 'r1', evil], cli);
  t.equal(refused.code, 1, refused.stdout);
  t.match(refused.stderr, /r1: reload refused: the new configuration would start 3 programs this robot does not allow/);
  t.match(refused.stderr, /modes\.idle\.lifecycle_hooks\[0\] \(on_entry command hook\): command hook \["\/usr\/bin\/touch" ".*hook-ran"\]/);
  t.match(refused.stderr, /modes\.idle\.mcp_servers\[0\] \(tools\): MCP stdio server \["\/usr\/bin\/touch" ".*mcp-ran"\]/);
  t.match(refused.stderr, /modes\.idle\.agent_actions\[0\] \(speak\)\.config\.speaker\.device: device "file:.*alsa-ran.*" is not in this robot's allowlist/);
  t.notOk(
    agent.events.some((e) => e.type === 'agent.stopping'),
    'the running agent was not stopped',
  );

  // The allowlisted program, exactly as listed: the reload goes through and the hook runs.
  const good = w.file('good.json5');
  writeFileSync(good, withPrograms(config, { command: `/usr/bin/touch ${marks.allowed}` }).replace('"Idle"', '"Resting"'));
  const ok = await fleetCli(['reload', 'r1', good], cli);
  t.equal(ok.code, 0, ok.stderr);
  await fileAppears(marks.allowed);
  await agent.waitFor((e) => e.type === 'hook' && e.handler_type.startsWith('command') && e.ok, 15_000, 'the allowed hook done');
  // A different argument is a different program.
  const other = w.file('other.json5');
  writeFileSync(other, withPrograms(config, { command: `/usr/bin/touch ${marks.allowed} ${marks.hook}` }));
  const refusedArgs = await fleetCli(['reload', 'r1', other], cli);
  t.equal(refusedArgs.code, 1);
  t.match(refusedArgs.stderr, /would start 1 program this robot does not allow/);

  t.notOk(existsSync(marks.hook), 'the evil command hook never ran');
  t.notOk(existsSync(marks.mcp), 'the evil MCP server never started');
  t.notOk(existsSync(marks.alsa), 'the ALSA pipe never ran');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});

t.test('fleet reload turned off on the robot (CORTEX_FLEET_RELOAD=off) is refused with the reason', async (t) => {
  const broker = await fleetBroker();
  t.teardown(() => broker.stop());
  const w = workDir();
  const file = w.file('robot.json5');
  const config = agentConfig({ socket: w.socket, fleet: { url: broker.url, username: 'r1', robot_id: 'r1', metrics_interval_seconds: 0 } });
  writeFileSync(file, config);
  const agent = startAgent(file, w.state, ['--for', '60s'], { CORTEX_MQTT_PASSWORD: USERS.r1, CORTEX_FLEET_RELOAD: 'off' });
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'fleet' && e.state === 'connected', 20_000, 'connected');
  const next = w.file('next.json5');
  writeFileSync(next, config.replace('"Idle"', '"Resting"'));
  const r = await fleetCli(['reload', 'r1', next], { CORTEX_MQTT_URL: broker.url });
  t.equal(r.code, 1);
  t.match(r.stderr, /r1: reload refused: fleet reload is turned off on this robot \(CORTEX_FLEET_RELOAD\)/);
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});

t.test("--watch reloads on save; a world-writable file is treated as pushed and its programs are refused; the robot's own file runs them", async (t) => {
  const w = workDir();
  const marker = w.file('watch-hook-ran');
  const file = w.file('robot.json5');
  const config = agentConfig({ socket: w.socket, fleet: { enabled: false } });
  writeFileSync(file, config, { mode: 0o644 });
  chmodSync(file, 0o644);
  const agent = startAgent(file, w.state, ['--for', '60s', '--watch']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'agent.started', 20_000, 'started');

  writeFileSync(file, config.replace('default_mode: "idle"', 'default_mode: "busy"'));
  const second = await agent.waitFor<Ev<'agent.started'>>((e) => e.type === 'agent.started' && e.mode === 'busy', 20_000, 'the saved configuration started');
  t.equal(second.mode, 'busy');

  chmodSync(file, 0o666);
  writeFileSync(file, withPrograms(config, { command: `/usr/bin/touch ${marker}` }));
  const refused = await agent.waitFor<Ev<'error'>>((e) => e.type === 'error' && e.source === 'reload', 20_000, 'the refusal');
  t.match(refused.message, /writable by every user \(mode 0666\): treated as pushed/);
  t.match(refused.message, /modes\.idle\.lifecycle_hooks\[0\] \(on_entry command hook\): command hook \["\/usr\/bin\/touch"/);
  t.equal(agent.events.filter((e) => e.type === 'agent.started').length, 2, 'no third start');
  t.notOk(existsSync(marker), 'the hook never ran');

  // Back to the robot's own file (the service user owns it, nobody else may write it): trusted as at
  // start, so its hook runs without being in the allowlist.
  const trusted = w.file('trusted-hook-ran');
  chmodSync(file, 0o644);
  writeFileSync(file, withPrograms(config, { command: `/usr/bin/touch ${trusted}` }));
  await agent.waitFor(
    (e) => e.type === 'agent.started' && agent.events.filter((x) => x.type === 'agent.started').length === 3,
    20_000,
    'the trusted save started',
  );
  await fileAppears(trusted);
  t.ok(existsSync(trusted), "the trusted file's hook ran");
  t.notOk(existsSync(marker), 'the refused hook still never ran');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});
