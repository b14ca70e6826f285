// A real agent while its broker is killed and restarted (state republished, queued QoS 1 commands delivered), and `fleet reload` of an invalid and a valid configuration.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { USERS, Watcher, agentConfig, fleetBroker, fleetCli } from '../helpers/fleet.js';
import { haveMosquitto, startGate } from '../support/mosquitto.js';
import { makeCommand, type RobotState } from '../../src/fleet/protocol.js';
import type { AgentEvent } from '../../src/cortex/events.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;
requireBuild();
if (!haveMosquitto()) throw new Error('mosquitto, mosquitto_passwd and openssl are missing (bash scripts/setup.sh --tests installs them)');
const state = (m: { json: Record<string, unknown> | undefined }) => m.json as unknown as RobotState;

t.test('the broker is killed and restarted: the robot works on, reconnects, republishes its state and gets the commands queued meanwhile', async (t) => {
  const broker = await fleetBroker();
  t.teardown(() => broker.stop());
  // The robot reaches the broker through a gate, so the test decides when it can reconnect.
  const gate = await startGate({ port: broker.port });
  t.teardown(() => gate.stop());
  const w = workDir();
  const file = w.file('robot.json5');
  writeFileSync(file, agentConfig({ socket: w.socket, fleet: { url: gate.url, username: 'r1', robot_id: 'r1', metrics_interval_seconds: 0 } }));
  const agent = startAgent(file, w.state, ['--for', '90s'], { CORTEX_MQTT_PASSWORD: USERS.r1 });
  t.teardown(() => void agent.child.kill('SIGKILL'));

  await agent.waitFor((e) => e.type === 'fleet' && e.state === 'connected', 20_000, 'connected');
  let watcher = await Watcher.start(broker.url);
  await watcher.waitFor((m) => m.topic === 'cortexd/r1/state' && state(m).mode === 'idle', 10_000, 'retained state in idle');
  // The broker saves its sessions every second: wait for a save that includes the robot's subscription.
  await broker.saved();
  await watcher.close();

  gate.close();
  await broker.kill();
  const lost = await agent.waitFor<Ev<'fleet'>>((e) => e.type === 'fleet' && e.state === 'backingOff', 10_000, 'backing off');
  t.match(lost.reason, /connection|closed|refused|ECONNRESET/i);

  // Offline, the robot works on: a keyword switches it to sleep.
  await typeLines(w.socket, ['sleep now']);
  await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'sleep', 10_000, 'switch while offline');

  await broker.restart();
  watcher = await Watcher.start(broker.url);
  t.teardown(() => watcher.close());
  const wake = makeCommand({ command: 'switch', mode: 'idle' }, 60_000);
  const hello = makeCommand({ command: 'say', text: 'hello again' }, 60_000);
  await watcher.publishCommand('r1', JSON.stringify(wake));
  await watcher.publishCommand('r1', JSON.stringify(hello));
  t.notOk(
    agent.events.some((e) => e.type === 'fleet.command'),
    'the robot has not seen them yet',
  );

  const mark = agent.events.length;
  gate.open();
  const back = await agent.waitFor<Ev<'fleet'>>((e) => e.type === 'fleet' && e.state === 'connected' && agent.events.indexOf(e) >= mark, 30_000, 'reconnected');
  t.equal(back.session_present, true, 'the broker kept the session across its restart');
  const replyTo = (id: string) => watcher.waitFor((m) => m.topic === 'cortexd/r1/replies' && m.json?.id === id, 15_000, `reply ${id}`);
  t.match((await replyTo(wake.id)).json, { ok: true, command: 'switch' });
  t.match((await replyTo(hello.id)).json, { ok: true, command: 'say' });
  await agent.waitFor((e) => e.type === 'input' && e.text === 'hello again', 10_000, 'the queued text reached the mode');

  const states = watcher.seen.filter((m) => m.topic === 'cortexd/r1/state').map((m) => state(m).mode);
  t.ok(states.includes('sleep'), 'the state changed offline was republished');
  await watcher.waitFor((m) => m.topic === 'cortexd/r1/state' && state(m).mode === 'idle', 10_000, 'state in idle after the queued switch');
  const status = await watcher.waitFor((m) => m.topic === 'cortexd/r1/status' && m.json?.status === 'online', 10_000, 'online again');
  t.ok(status);
  const connects = agent.events.filter((e) => e.type === 'fleet' && e.state === 'connected');
  t.equal(connects.length, 2, 'one reconnect');

  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
  const offline = await watcher.waitFor((m) => m.topic === 'cortexd/r1/status' && m.json?.status === 'offline', 10_000, 'offline at stop');
  t.match(offline.json, { reason: 'SIGTERM' });
});

t.test('reload: an invalid configuration is refused with the check lines and the old one runs on; a valid one replaces it in the same process', async (t) => {
  const broker = await fleetBroker();
  t.teardown(() => broker.stop());
  const watcher = await Watcher.start(broker.url);
  t.teardown(() => watcher.close());
  const w = workDir();
  const file = w.file('robot.json5');
  const config = agentConfig({ socket: w.socket, fleet: { url: broker.url, username: 'r1', robot_id: 'r1', metrics_interval_seconds: 0 } });
  writeFileSync(file, config);
  const agent = startAgent(file, w.state, ['--for', '90s'], { CORTEX_MQTT_PASSWORD: USERS.r1 });
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const first = state(await watcher.waitFor((m) => m.topic === 'cortexd/r1/state', 20_000, 'state'));
  const cli = { CORTEX_MQTT_URL: broker.url };

  const bad = w.file('bad.json5');
  writeFileSync(bad, config.replaceAll('hertz: 5,', 'hertz: 500,'));
  const refused = await fleetCli(['reload', 'r1', bad], cli);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /r1: reload refused: the new configuration is invalid \(2 problems\); robot keeps running/);
  for (const mode of ['idle', 'sleep'])
    t.match(refused.stderr, new RegExp(`robot\\.json5(:\\d+:\\d+)?: modes\\.${mode}\\.hertz: must be at most 100 Hz`), `the check line of ${mode}`);
  const json = await fleetCli(['reload', 'r1', bad, '--json'], cli);
  t.match(JSON.parse(json.stdout), { ok: false, command: 'reload', lines: [String, String] });

  // The old configuration still runs: same file, and it still answers.
  t.notOk(
    agent.events.some((e) => e.type === 'agent.stopping'),
    'the agent was not stopped',
  );
  await typeLines(w.socket, ['what is your name']);
  await agent.waitFor((e) => e.type === 'action' && e.label === 'speak' && e.state === 'done', 20_000, 'an answer from the old configuration');
  t.equal(state(watcher.seen.filter((m) => m.topic === 'cortexd/r1/state').at(-1)!).config_sha256, first.config_sha256);

  const good = w.file('good.json5');
  writeFileSync(
    good,
    config.replace('idle: { display_name: "Idle"', 'idle: { display_name: "Resting"').replace('default_mode: "idle"', 'default_mode: "busy"'),
  );
  const reloaded = await fleetCli(['reload', 'r1', good], cli);
  t.equal(reloaded.code, 0, reloaded.stderr);
  t.match(reloaded.stdout, /r1: reload ok \(valid; restarting the agent with it/);
  t.match(reloaded.stdout, /r1 runs the new configuration/);
  const stopping = await agent.waitFor<Ev<'agent.stopping'>>((e) => e.type === 'agent.stopping', 10_000, 'the old agent stopping');
  t.match(stopping.reason, /^reload \(fleet command /);
  const started = agent.events.filter((e) => e.type === 'agent.started') as Array<Ev<'agent.started'>>;
  t.equal(started.length, 2, 'a second agent in the same process');
  t.equal(started[1]!.mode, 'busy');
  const now = state(watcher.seen.filter((m) => m.topic === 'cortexd/r1/state').at(-1)!);
  t.not(now.config_sha256, first.config_sha256);
  t.equal(now.mode, 'busy');
  t.equal(readFileSync(file, 'utf8'), config, 'the file on disk is not touched');

  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});
