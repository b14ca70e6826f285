// Proves OM1's emotion/unitree_sdk and arm_g1/unitree_sdk as translated: a Unitree G1's head LED (voice API) and arm gestures (arm action API) over DDS, taken by a real CycloneDDS peer on loopback; --simulate shows them on WebSim's face and the terminal.
import t from 'tap';
import pino from 'pino';
import { createUnitreeArmConnector, createUnitreeLedConnector } from '../../actors/actions/connectors/unitree-api.js';
import type { ActionContext } from '../../src/cortex/action.js';
import { translateAction } from '../../src/compat/om1/names.js';
import { simulateConfig } from '../../src/config/simulate.js';
import { freshDomain, startPeer, useLoopback } from '../helpers/dds-peers.js';

const domain = freshDomain() + 9;
useLoopback(domain);
const logger = pino({ level: 'silent' });

t.test("OM1's emotion/unitree_sdk: the G1's head LED on its bus, WebSim's face under --simulate, named missing without a G1", async (t) => {
  const g1 = { robot: 'unitree_g1' as const, transport: 'unitree_dds' as const, networkInterface: 'eth0', backgrounds: new Map(), simulate: false };
  t.match(translateAction('emotion', 'unitree_sdk', {}, g1), {
    kind: 'ok',
    entry: { name: 'face', connector: 'unitree_led', config: { network_interface: 'eth0' } },
  });
  t.match(translateAction('emotion', 'unitree_sdk', {}, { ...g1, simulate: true }), { kind: 'ok', entry: { name: 'face', connector: 'websim' } });
  t.match(translateAction('emotion', 'unitree_sdk', {}, { ...g1, robot: 'turtlebot4', transport: 'ros2_zenoh' }), { kind: 'missing', reason: /names no G1/ });
  const sim = simulateConfig({ agent_actions: [{ name: 'face', llm_label: 'emotion', connector: 'unitree_led', config: { network_interface: 'eth0' } }] });
  t.match(sim.config.agent_actions, [{ name: 'face', connector: 'websim', config: {} }], 'a native file under --simulate shows it on WebSim');
});

t.test('each expression is one LedControl request (api 1010, no reply asked) with its colour; an unknown one is refused by name', async (t) => {
  const robot = await startPeer('go2', domain);
  t.teardown(() => robot.stop());
  const lines: string[] = [];
  const ctx: ActionContext = { logger, stateDir: '/nonexistent', write: (l) => lines.push(l) };
  const led = createUnitreeLedConnector({}, ctx);
  t.teardown(() => led.stop());
  // Discovery takes a moment: the first request is sent again until the robot prints it.
  let seen: string | undefined;
  for (let i = 0; i < 100 && !seen; i++) {
    await led.run({ emotion: 'joy' }, new AbortController().signal);
    seen = await robot.waitLine(/^voice /, 200).catch(() => undefined);
  }
  t.equal(seen, 'voice 1010 {"R":0,"G":255,"B":0}', 'joy is green, as OM1 lights happy');
  const from = robot.lines.length;
  await led.run({ emotion: 'sad' }, new AbortController().signal);
  t.equal(await robot.waitLine(/^voice /, 10_000, from), 'voice 1010 {"R":255,"G":255,"B":0}', 'sad is yellow');
  t.match(lines.at(-1), '[face] sad: head LED 255, 255, 0');
  await t.rejects(led.run({ emotion: 'angry' }, new AbortController().signal), { message: /no LED colour for expression "angry"; known: neutral, joy/ });
});

t.test("OM1's arm_g1/unitree_sdk: ExecuteAction with the firmware's gesture id; a halt releases a held gesture once; an unknown one is refused", async (t) => {
  const g1 = { robot: 'unitree_g1' as const, transport: 'unitree_dds' as const, networkInterface: undefined, backgrounds: new Map(), simulate: false };
  t.match(translateAction('arm_g1', 'unitree_sdk', {}, g1), { kind: 'ok', entry: { name: 'arm', connector: 'unitree_arm' } });
  t.match(translateAction('arm_g1', 'unitree_sdk', {}, { ...g1, simulate: true }), { kind: 'ok', entry: { name: 'arm', connector: 'console' } });
  t.match(translateAction('arm_g1', 'unitree_sdk', {}, { ...g1, robot: 'unitree_go2' }), { kind: 'missing', reason: /names no G1/ });
  const robot = await startPeer('go2', domain);
  t.teardown(() => robot.stop());
  const lines: string[] = [];
  const arm = createUnitreeArmConnector({}, { logger, stateDir: '/nonexistent', write: (l) => lines.push(l) });
  t.teardown(() => arm.stop());
  let seen: string | undefined;
  for (let i = 0; i < 100 && !seen; i++) {
    await arm.run({ action: 'high five' }, new AbortController().signal);
    seen = await robot.waitLine(/^arm /, 200).catch(() => undefined);
  }
  t.equal(seen, 'arm 7106 {"data":18}', 'high five is action 18');
  let from = robot.lines.length;
  await arm.halt!();
  t.equal(await robot.waitLine(/^arm /, 10_000, from), 'arm 7106 {"data":99}', 'a halt sends release arm');
  from = robot.lines.length;
  await arm.halt!();
  await arm.run({ action: 'shake hand' }, new AbortController().signal);
  t.equal(await robot.waitLine(/^arm /, 10_000, from), 'arm 7106 {"data":27}', 'a second halt sent nothing more');
  await t.rejects(arm.run({ action: 'backflip' }, new AbortController().signal), { message: /no G1 arm gesture "backflip"; known: release arm, left kiss/ });
});
