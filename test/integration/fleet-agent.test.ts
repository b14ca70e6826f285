// Real agents (`cortexd run`) against mosquitto over TLS with passwords and the shipped ACL: state and last will, every command and its refusals, a wrong password, a topic the ACL denies.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { startAgent, typeLines, workDir, type AgentProcess } from '../helpers/agent-process.js';
import { USERS, Watcher, agentConfig, fleetBroker, fleetCli } from '../helpers/fleet.js';
import { haveMosquitto, type Broker } from '../support/mosquitto.js';
import { makeCommand, type FleetReply, type RobotState } from '../../src/fleet/protocol.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { waitFor } from '../helpers/wait.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;
requireBuild();
if (!haveMosquitto()) throw new Error('mosquitto, mosquitto_passwd and openssl are missing (bash scripts/setup.sh --tests installs them)');

let broker: Broker;
let watcher: Watcher;

t.before(async () => {
  broker = await fleetBroker({ tls: true });
  watcher = await Watcher.start(broker.tlsUrl!, { caFile: broker.caFile! });
});
t.teardown(async () => {
  await watcher?.close();
  await broker?.stop();
});

/** Starts an agent whose fleet block is `fleet` (TLS with the test CA); the password comes from the environment. */
function robot(
  t: { teardown: (fn: () => void) => void },
  fleet: Record<string, unknown>,
  password: string,
  manualRules = false,
): { agent: AgentProcess; socket: string } {
  const w = workDir();
  const file = w.file('robot.json5');
  writeFileSync(
    file,
    agentConfig({ socket: w.socket, manualRules, fleet: { url: broker.tlsUrl, ca_file: broker.caFile, metrics_interval_seconds: 0.5, ...fleet } }),
  );
  const agent = startAgent(file, w.state, ['--for', '90s'], { CORTEX_MQTT_PASSWORD: password, CORTEX_LOG_LEVEL: 'info' });
  t.teardown(() => void agent.child.kill('SIGKILL'));
  return { agent, socket: w.socket };
}

const state = (m: { json: Record<string, unknown> | undefined }) => m.json as unknown as RobotState;

t.test('a robot publishes its status and state, takes every command or says why not, and leaves a last will', async (t) => {
  const { agent } = robot(t, { username: 'r1', robot_id: 'r1' }, USERS.r1, true);
  const online = await watcher.waitFor((m) => m.topic === 'cortexd/r1/status' && m.json?.status === 'online', 20_000, 'r1 online');
  t.match(online.json, { status: 'online', robot: 'r1', config: 'robot', version: /^\d+\.\d+\.\d+/ });
  const first = await watcher.waitFor((m) => m.topic === 'cortexd/r1/state', 10_000, 'r1 state');
  t.match(state(first), {
    robot: 'r1',
    mode: 'idle',
    modes: ['idle', 'busy', 'sleep'],
    health: { ok: true, inputs: { TextInput: { state: 'ok' } }, actions: { speak: { state: 'ok' } } },
    config_sha256: /^[0-9a-f]{64}$/,
  });

  const cli = { CORTEX_MQTT_URL: broker.tlsUrl!, CORTEX_MQTT_CA_FILE: broker.caFile! };
  const ls = await fleetCli(['ls', '--json'], cli);
  t.equal(ls.code, 0, ls.stderr);
  t.match(JSON.parse(ls.stdout), [{ robot: 'r1', online: true, mode: 'idle', health: 'ok' }]);
  const table = await fleetCli(['ls'], cli);
  t.match(table.stdout, /r1\s*│\s*yes\s*│\s*idle\s*│\s*ok/);
  const watch = await fleetCli(['watch', 'r1', '--count', '2', '--json'], cli);
  t.equal(watch.code, 0, watch.stderr);
  const lines = watch.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { robot: string; kind: string; message: Record<string, unknown> });
  t.same(
    lines.map((l) => [l.robot, l.kind]).sort(),
    [
      ['r1', 'state'],
      ['r1', 'status'],
    ],
    'the retained status and state first',
  );
  const usage = await fleetCli(['ls'], { CORTEX_MQTT_URL: '' });
  t.equal(usage.code, 2);
  t.match(usage.stderr, /^cortexd: no broker: set CORTEX_MQTT_URL .* or pass --url\n$/);
  const badPassword = await fleetCli(['ls'], { ...cli, CORTEX_MQTT_PASSWORD: 'nope' });
  t.equal(badPassword.code, 1);
  t.match(badPassword.stderr, /^cortexd: mqtts:\/\/127\.0\.0\.1:\d+ refused the connection of user "operator": not authorized/);

  // switch: the same rules as a manual switch (this configuration allows idle <-> busy by hand only).
  const refused = await fleetCli(['switch', 'r1', 'sleep'], cli);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /r1: switch refused: .*manual/);
  const switched = await fleetCli(['switch', 'r1', 'busy'], cli);
  t.equal(switched.code, 0, switched.stderr);
  t.match(switched.stdout, 'r1: switch ok');
  await watcher.waitFor((m) => m.topic === 'cortexd/r1/state' && state(m).mode === 'busy', 10_000, 'state in busy');
  t.match(await watcher.command('r1', { command: 'switch', mode: 'nowhere' }), { ok: false, reason: /nowhere/ });

  // say: typed text of the current mode; busy has no text input.
  t.match(await watcher.command('r1', { command: 'say', text: 'hello' }), { ok: false, reason: 'mode busy has no input that takes typed text' });
  t.match(await watcher.command('r1', { command: 'switch', mode: 'idle' }), { ok: true });
  const said = await fleetCli(['say', 'r1', 'what', 'is', 'your', 'name'], cli);
  t.equal(said.code, 0, said.stderr);
  await agent.waitFor((e) => e.type === 'input' && e.text === 'what is your name', 10_000, 'the typed text');
  const answer = await watcher.waitFor((m) => m.topic === 'cortexd/r1/events' && m.json?.type === 'model.answer', 15_000, 'model.answer on events');
  t.same(answer.json?.tool_calls, [{ name: 'speak' }], 'the answer is reported without its arguments');
  t.notOk(answer.json && 'text' in answer.json, 'nor its text (share_transcripts is off)');
  t.notOk(
    watcher.seen.some((m) => m.topic === 'cortexd/r1/events' && m.json?.type === 'input'),
    'what the robot heard stays on the robot',
  );

  // context: drives context_aware rules (dock = "yes" sends idle to sleep).
  const ctx = await fleetCli(['context', 'r1', 'dock=yes'], cli);
  t.equal(ctx.code, 0, ctx.stderr);
  await watcher.waitFor((m) => m.topic === 'cortexd/r1/state' && state(m).mode === 'sleep', 10_000, 'state in sleep after the context rule');

  // estop and release: the safety governor's latch, on the state and the bus like any other source's.
  const estop = await fleetCli(['estop', 'r1', '--reason', 'test'], cli);
  t.equal(estop.code, 0, estop.stderr);
  await watcher.waitFor((m) => m.topic === 'cortexd/r1/state' && state(m).estop.engaged === true, 10_000, 'e-stop engaged');
  t.match(await watcher.command('r1', { command: 'release' }), { ok: true });
  await watcher.waitFor((m) => m.topic === 'cortexd/r1/state' && state(m).estop.engaged === false, 10_000, 'e-stop released');
  t.match(await watcher.command('r1', { command: 'release' }), { ok: false, reason: 'no emergency stop is latched' });

  // Ids and expiry: a replay, a stale command, one claiming too long a life, one that is not a command.
  const once = makeCommand({ command: 'context', values: { visits: 1 } }, 30_000);
  const replies = async (id: string, n: number) => {
    const seen = () => watcher.seen.filter((m) => m.topic === 'cortexd/r1/replies' && m.json?.id === id);
    await watcher.waitFor(() => seen().length >= n, 10_000, `${n} replies to ${id}`);
    return seen().map((m) => m.json as unknown as FleetReply);
  };
  await watcher.publishCommand('r1', JSON.stringify(once));
  await replies(once.id, 1);
  await watcher.publishCommand('r1', JSON.stringify(once));
  const [ok, replayed] = await replies(once.id, 2);
  t.match(ok, { ok: true });
  t.match(replayed, { ok: false, reason: /^replayed/ });
  const stale = { ...makeCommand({ command: 'say', text: 'late' }, 1000), expires_at: Date.now() - 5000 };
  await watcher.publishCommand('r1', JSON.stringify(stale));
  t.match((await replies(stale.id, 1))[0], { ok: false, reason: /^stale: it expired/ });
  const far = makeCommand({ command: 'say', text: 'forever' }, 3_600_000);
  await watcher.publishCommand('r1', JSON.stringify(far));
  t.match((await replies(far.id, 1))[0], { ok: false, reason: /expires too far ahead: a command may live at most 300 s/ });
  await watcher.publishCommand('r1', JSON.stringify({ id: 'not-a-command-1', command: 'dance', expires_at: Date.now() + 1000 }));
  t.match((await replies('not-a-command-1', 1))[0], { ok: false, reason: /^invalid command: / });
  t.notOk(
    agent.events.some((e) => e.type === 'input' && (e.text === 'late' || e.text === 'forever')),
    'refused commands did nothing',
  );

  const metrics = await watcher.waitFor(
    (m) => m.topic === 'cortexd/r1/metrics' && Number(m.json?.commands_refused) >= 5,
    10_000,
    'metrics counting the refusals',
  );
  t.match(metrics.json, { robot: 'r1', ticks: Number, model_calls: Number, commands_ok: Number, broker_reconnects: 0 });

  // Secrets: the robot's password is in no message, event or log line.
  const everything = watcher.seen.map((m) => m.text).join('\n') + JSON.stringify(agent.events) + agent.stderr();
  t.notOk(everything.includes(USERS.r1), 'the password never leaves the robot');

  // The last will: a robot that dies is offline at once.
  agent.child.kill('SIGKILL');
  const will = await watcher.waitFor((m) => m.topic === 'cortexd/r1/status' && m.json?.status === 'offline', 15_000, 'the last will');
  t.match(will.json, { status: 'offline', robot: 'r1', reason: 'connection lost' });
  t.ok(watcher.seen.indexOf(will) > watcher.seen.indexOf(online), 'after it was online');
});

t.test('a wrong password is a clear error and the robot works on; a topic the ACL denies is refused and reported', async (t) => {
  const wrong = robot(t, { username: 'r1', robot_id: 'r1' }, 'not-the-password');
  const denied = robot(t, { username: 'r1', robot_id: 'r2' }, USERS.r1);

  const failed = await wrong.agent.waitFor<Ev<'fleet'>>((e) => e.type === 'fleet' && e.state === 'failed', 20_000, 'fleet failed');
  t.match(failed.reason, /^mqtts:\/\/127\.0\.0\.1:\d+ refused the connection of user "r1": not authorized .*wrong user name or password.*not retrying/);
  // The log is JSON lines (the quotes of the message escaped).
  await waitFor(() => (/fleet: mqtts:\/\/127\.0\.0\.1:\d+ refused the connection of user \\"r1\\"/.test(wrong.agent.stderr()) ? true : undefined), 10_000);
  t.pass('in the log too');
  t.notOk(wrong.agent.stderr().includes('not-the-password'), 'the password is not in the log');

  const refusal = await denied.agent.waitFor<Ev<'error'>>((e) => e.type === 'error' && e.source === 'fleet', 20_000, 'the refused publish');
  t.match(refusal.message, /the broker refused to publish to cortexd\/r2\/(status|state): not authorized \(the ACL does not allow this user on that topic\)/);

  // Both keep working: typed text is answered.
  for (const r of [wrong, denied]) {
    await r.agent.waitFor((e) => e.type === 'tick', 20_000, 'a tick');
    await typeLines(r.socket, ['what is your name']);
    await r.agent.waitFor((e) => e.type === 'action' && e.label === 'speak' && e.state === 'done', 20_000, 'an answer spoken');
  }
  t.notOk(
    watcher.seen.some((m) => m.topic.startsWith('cortexd/r2/')),
    'nothing was published in r2 name with r1 credentials',
  );
  for (const r of [wrong, denied]) {
    r.agent.child.kill('SIGTERM');
    t.equal(await r.agent.exited, 0, 'a normal stop');
  }
});
