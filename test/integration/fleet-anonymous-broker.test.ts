// On a broker that lets anyone in, another local user cannot release the e-stop, switch modes or relax safety; estop always works; the operator's signed commands do.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { MAIN, startAgent, workDir } from '../helpers/agent-process.js';
import { agentConfig, fleetCli } from '../helpers/fleet.js';
import { requireBuild } from '../helpers/requires.js';
import { haveMosquitto, startMosquitto } from '../support/mosquitto.js';
import { makeCommand, type CommandBody } from '../../src/fleet/protocol.js';
import type { AgentEvent } from '../../src/cortex/events.js';

t.setTimeout(300_000);
requireBuild();
if (!haveMosquitto()) throw new Error('mosquitto is missing (bash scripts/setup.sh --tests installs it)');

type CommandEvent = Extract<AgentEvent, { type: 'fleet.command' }>;

/** Publishes `body` to robot r1 as `nobody` with mosquitto_pub, no credentials (when root can become nobody), else as this user. */
function publishAsStranger(url: string, body: CommandBody): string {
  const cmd = makeCommand(body, 60_000);
  const port = new URL(url).port;
  const args = ['-h', '127.0.0.1', '-p', port, '-V', 'mqttv5', '-q', '1', '-t', 'cortexd/r1/commands', '-m', JSON.stringify(cmd)];
  const asNobody = process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v setpriv']).status === 0;
  const r = asNobody
    ? spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'mosquitto_pub', ...args], { encoding: 'utf8' })
    : spawnSync('mosquitto_pub', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mosquitto_pub failed: ${r.stderr}`);
  return cmd.id;
}

function keygen(dir: string): { file: string; publicKey: string } {
  const file = `${dir}/operator.pem`;
  const r = spawnSync(process.execPath, [MAIN, 'fleet', 'keygen', '--out', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return { file, publicKey: r.stdout.trim() };
}

async function setup(t: Test, fleetExtra: Record<string, unknown>) {
  const broker = await startMosquitto({ users: {}, allowAnonymous: true });
  t.teardown(() => broker.stop());
  const w = workDir();
  const key = keygen(w.dir);
  const fleet = { url: broker.url, robot_id: 'r1', metrics_interval_seconds: 0, operator_keys: [key.publicKey], ...fleetExtra };
  const config = agentConfig({ socket: w.socket, fleet });
  const file = w.file('robot.json5');
  writeFileSync(file, config);
  const agent = startAgent(file, w.state, ['--for', '120s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'fleet' && e.state === 'connected', 30_000, 'the fleet connected');
  const reply = (id: string) =>
    agent.waitFor((e): e is CommandEvent => e.type === 'fleet.command' && e.id === id, 20_000, `the answer to ${id}`) as Promise<CommandEvent>;
  // The operator's CLI, anonymous on this broker, with or without the signing key.
  const cli = (args: string[], signed: boolean) =>
    fleetCli(args, {
      CORTEX_MQTT_URL: broker.url,
      CORTEX_MQTT_USERNAME: '',
      CORTEX_MQTT_PASSWORD: '',
      ...(signed ? { CORTEX_FLEET_OPERATOR_KEY: key.file } : {}),
    });
  return { broker, w, key, agent, reply, cli, config, file };
}

t.test('check warns that the robot joins a broker without credentials', async (t) => {
  const w = workDir();
  const file = w.file('robot.json5');
  writeFileSync(file, agentConfig({ socket: w.socket, fleet: { url: 'mqtt://127.0.0.1:1', robot_id: 'r1' } }));
  const r = spawnSync(process.execPath, [MAIN, 'check', '--config', file], {
    encoding: 'utf8',
    env: { ...process.env, CORTEX_STATE_DIR: w.state, CORTEX_MQTT_URL: '', CORTEX_MQTT_USERNAME: '', CORTEX_MQTT_PASSWORD: '' },
  });
  t.match(r.stdout + r.stderr, /joins the broker without credentials.*refuse every fleet command but estop/);
});

t.test('open broker, not accepted: a stranger can latch but not release, switch or reload; the signed operator can release', async (t) => {
  const { broker, agent, reply, cli } = await setup(t, {});

  const estop = publishAsStranger(broker.url, { command: 'estop', reason: 'stranger' });
  t.ok((await reply(estop)).ok, 'an estop from anyone latches (a stop is never the dangerous direction)');

  const release = publishAsStranger(broker.url, { command: 'release' });
  const r1 = await reply(release);
  t.notOk(r1.ok);
  t.match(r1.reason, /lets in clients without credentials/);

  const sw = publishAsStranger(broker.url, { command: 'switch', mode: 'busy' });
  t.match((await reply(sw)).reason, /lets in clients without credentials/);
  t.notOk(
    agent.events.some((e) => e.type === 'mode.changed' && e.to === 'busy'),
    'the mode did not change',
  );

  const unsignedOperator = await cli(['release', 'r1'], false);
  t.equal(unsignedOperator.code, 1, 'the operator without the key is refused too');

  const signed = await cli(['release', 'r1'], true);
  t.equal(signed.code, 0, signed.stderr);
  t.match(signed.stdout, /r1: release ok/);
  await agent.waitFor((e) => e.type === 'fleet.command' && e.command === 'release' && e.ok, 10_000, 'the signed release');
});

t.test('open broker accepted: unsigned commands run, but a release or a reload that relaxes safety needs the signature', async (t) => {
  const { broker, reply, cli, config, w } = await setup(t, { accept_anonymous_broker: true });
  const sw = publishAsStranger(broker.url, { command: 'switch', mode: 'sleep' });
  t.ok((await reply(sw)).ok, 'accepted by fleet.accept_anonymous_broker');

  publishAsStranger(broker.url, { command: 'estop' });
  const release = publishAsStranger(broker.url, { command: 'release' });
  t.match((await reply(release)).reason, /a release needs the operator's signed command/);

  const relaxed = config.replace('api_key: "",', 'api_key: "", safety: { deadman_seconds: 3600 },');
  const relaxedFile = w.file('relaxed.json5');
  writeFileSync(relaxedFile, relaxed);
  const unsigned = await cli(['reload', 'r1', relaxedFile], false);
  t.equal(unsigned.code, 1, unsigned.stdout + unsigned.stderr);
  t.match(unsigned.stderr, /relaxes safety \(1 limit\), which needs the operator's identity/);
  t.match(unsigned.stderr, /safety: deadman_seconds 3 s -> 3600 s/);

  const signed = await cli(['reload', 'r1', relaxedFile], true);
  t.equal(signed.code, 0, signed.stderr);
});

t.test('a signed command altered or sent to another robot does not verify', async (t) => {
  const { broker, reply, key } = await setup(t, {});
  const { parsePrivateKey, signCommand } = await import('../../src/fleet/identity.js');
  const { readFileSync } = await import('node:fs');
  const pk = parsePrivateKey(readFileSync(key.file, 'utf8'));
  const client = await mqtt.connectAsync(broker.url, { protocolVersion: 5 });
  t.teardown(() => client.endAsync());
  const forOther = signCommand(makeCommand({ command: 'switch', mode: 'busy' }, 60_000), 'r2', pk);
  await client.publishAsync('cortexd/r1/commands', JSON.stringify(forOther), { qos: 1 });
  t.match((await reply(forOther.id)).reason, /bad signature: the signature matches none/);
  const altered = { ...signCommand(makeCommand({ command: 'switch', mode: 'busy' }, 60_000), 'r1', pk), mode: 'sleep' };
  await client.publishAsync('cortexd/r1/commands', JSON.stringify(altered), { qos: 1 });
  t.match((await reply(altered.id)).reason, /bad signature/);
});
