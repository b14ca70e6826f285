// Proves navigate_location (OM1's unitree_go2_nav, translated): places from a map server in OM1's list shapes, a Nav2 goal over DDS to a real CycloneDDS peer whose status comes back, a halt (direct, and the whole agent's e-stop) cancelling that goal through the action's cancel service (and saying so when nobody answers), and the simulated body driving to a place and stopping when told.
import t from 'tap';
import pino from 'pino';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNav2Connector, parsePlaces, placeKey } from '../../actors/actions/connectors/nav2.js';
import type { ActionContext } from '../../src/cortex/action.js';
import { BodyBoard } from '../../src/cortex/bodies.js';
import { SimBody } from '../../devices/body/sim-body.js';
import { translateAction } from '../../src/compat/om1/names.js';
import { freshDomain, startPeer, useLoopback } from '../helpers/dds-peers.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../../actors/agent/agent.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import { AgentConfig, type LoadedConfig } from '../../src/config/schema.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { createLogger } from '../../src/log.js';
import { requireBuild } from '../helpers/requires.js';
import { until } from '../helpers/wait.js';
import { scriptedLlm } from '../helpers/plugins.js';

const domain = freshDomain() + 7;
useLoopback(domain);
const logger = pino({ level: 'silent' });

/** OM1's map server: its list as a JSON string in `message` (as the robot's map service answers). */
async function mapServer(t: { teardown: (fn: () => unknown) => void }, places: Record<string, unknown>): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status: 'ok', message: JSON.stringify(places) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/maps/locations/list`, hits: () => hits };
}

const KITCHEN = { name: 'Kitchen', pose: { position: { x: 2, y: 1, z: 0 }, orientation: { x: 0, y: 0, z: Math.SQRT1_2, w: Math.SQRT1_2 } } };

function ctx(extra: Partial<ActionContext> = {}): ActionContext & { lines: string[]; context: Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const context: Array<Record<string, unknown>> = [];
  return { logger, stateDir: '/nonexistent', write: (l) => lines.push(l), publishContext: (v) => context.push(v), lines, context, ...extra };
}

t.test("OM1's shapes of a place list, and its label clean-up", async (t) => {
  const [kitchen, ...more] = parsePlaces({ message: JSON.stringify({ kitchen: KITCHEN }) });
  t.match(kitchen, { name: 'Kitchen', x: 2, y: 1 });
  t.ok(Math.abs(kitchen!.heading - 90) < 1e-4, `the quaternion's yaw in degrees (${kitchen!.heading})`);
  t.same(more, []);
  t.same(parsePlaces([{ label: 'door', pose: { position: { x: -1, y: 0 } } }, { name: '' }]), [{ name: 'door', x: -1, y: 0, heading: 0 }]);
  t.same(parsePlaces({ dock: 'x' }), [{ name: 'dock', x: 0, y: 0, heading: 0 }], 'an entry without a pose is at the origin, as OM1 takes it');
  t.throws(() => parsePlaces({ message: 'not json' }), { message: /message is not JSON/ });
  t.equal(placeKey('Take me to the Kitchen '), 'kitchen');
});

t.test('OM1 files: unitree_go2_nav becomes nav2 on the Go2 bus, or the simulated body under --simulate', async (t) => {
  const scope = { robot: 'unitree_go2' as const, transport: 'unitree_dds' as const, networkInterface: 'eth0', backgrounds: new Map(), simulate: false };
  t.match(translateAction('navigate_location', 'unitree_go2_nav', { base_url: 'http://robot:5000/maps/locations/list', timeout: 3 }, scope), {
    kind: 'ok',
    entry: {
      name: 'navigate_location',
      connector: 'nav2',
      config: {
        robot: 'unitree_go2',
        binding: 'unitree_dds',
        locations_url: 'http://robot:5000/maps/locations/list',
        timeout_seconds: 3,
        network_interface: 'eth0',
      },
    },
  });
  t.match(translateAction('navigate_location', 'unitree_g1_nav', {}, { ...scope, simulate: true }), {
    kind: 'ok',
    entry: { config: { binding: 'sim', locations_url: 'http://localhost:5000/maps/locations/list' } },
  });
  t.match(translateAction('navigate_location', 'unitree_go2_nav', {}, { ...scope, robot: undefined, transport: undefined }), {
    kind: 'missing',
    reason: /no robot bus this runtime carries/,
  });
  t.match(translateAction('navigate_location', 'teleport', {}, scope), { kind: 'missing', reason: /connector teleport has no counterpart/ });
});

t.test('a robot: the goal reaches Nav2 (a CycloneDDS peer) as a PoseStamped in the map frame; its status comes back as context values', async (t) => {
  const nav2 = await startPeer('nav2', domain);
  t.teardown(() => nav2.stop());
  const server = await mapServer(t, { kitchen: KITCHEN });
  const c = ctx();
  const connector = createNav2Connector({ robot: 'unitree_go2', binding: 'ros2', locations_url: server.url }, c);
  t.teardown(() => connector.stop());
  await connector.run({ location: 'go to the kitchen' }, new AbortController().signal);
  const goal = await nav2.waitLine(/^goal /, 20_000);
  const [, frame, x, y, qz, qw] = goal.split(' ');
  t.equal(frame, 'map');
  t.same([Number(x), Number(y)], [2, 1], 'at the place on the map');
  t.ok(Math.abs(Number(qz) - Math.SQRT1_2) < 0.001 && Math.abs(Number(qw) - Math.SQRT1_2) < 0.001, `facing the place's heading (${qz}, ${qw})`);
  t.match(c.lines, [/goal Kitchen: x 2 m, y 1 m, heading 90 deg on \/goal_pose/]);
  await statusSeen(c, 'SUCCEEDED');
  t.match(c.context, [
    { navigation_status: 'SENT', navigating: true, navigation_goal: 'Kitchen' },
    { navigation_status: 'EXECUTING', navigating: true, navigation_goal: 'Kitchen' },
    { navigation_status: 'SUCCEEDED', navigating: false, navigation_goal: 'Kitchen' },
  ]);
  await t.rejects(connector.run({ location: 'the moon' }, new AbortController().signal), {
    name: 'CortexError',
    message: 'no place "the moon" on the map; known places: Kitchen',
  });
  t.equal(server.hits(), 1, 'the list is fetched once per refresh interval');
});

/** Waits until a context value has navigation_status `s` (at most 20 s). */
async function statusSeen(c: { context: Array<Record<string, unknown>> }, s: string): Promise<void> {
  await until(`navigation_status ${s}`, () => c.context.some((v) => v.navigation_status === s), 20_000);
}

t.test("a halt cancels the goal Nav2 drives through the action's cancel service; Nav2 accepts and the goal ends CANCELED", async (t) => {
  const nav2 = await startPeer('nav2', domain + 2, ['30']);
  t.teardown(() => nav2.stop());
  const c = ctx();
  const connector = createNav2Connector({ robot: 'unitree_go2', binding: 'ros2', domain_id: domain + 2, locations: { hall: { x: 10, y: 0 } } }, c);
  t.teardown(() => connector.stop());
  await connector.run({ location: 'hall' }, new AbortController().signal);
  await nav2.waitLine(/^goal /, 20_000);
  await statusSeen(c, 'EXECUTING');
  t.match(c.context.at(-1), { navigation_status: 'EXECUTING', navigating: true }, 'the goal is being driven (30 s)');
  const began = Date.now();
  await connector.halt!();
  const took = Date.now() - began;
  const cancel = await nav2.waitLine(/^cancel /, 5_000);
  const [, guid, seq, uuid0, what] = cancel.split(' ');
  t.ok(BigInt(guid!) > 0n, `the request carries rmw_cyclonedds's header: client guid ${guid}`);
  t.equal(seq, '1', 'and the sequence number');
  t.equal(uuid0, '0', 'a zero goal id: every goal is cancelled');
  t.equal(what, 'answered');
  t.ok(took < 1500, `halt resolved promptly (${took} ms)`);
  t.match(c.lines.at(-1), /^\[navigate\] halt: Nav2 accepted the cancel of hall \(ERROR_NONE; 1 goal\(s\) canceling\)$/);
  await statusSeen(c, 'CANCELED');
  t.match(c.context.at(-1), { navigation_status: 'CANCELED', navigating: false, navigation_goal: 'hall' }, 'the goal ended');
  t.ok(await nav2.waitLine(/^canceled$/, 5_000), 'the peer stopped driving the goal');
  const lines = c.lines.length;
  await connector.halt!();
  t.equal(c.lines.length, lines, 'a halt after the goal ended sends nothing more');
});

t.test('a Nav2 that does not answer cancels: halt still resolves within its wait and says plainly that nobody answered', async (t) => {
  const nav2 = await startPeer('nav2', domain + 3, ['30', 'mute']);
  t.teardown(() => nav2.stop());
  const c = ctx();
  const connector = createNav2Connector({ robot: 'unitree_go2', binding: 'ros2', domain_id: domain + 3, locations: { hall: { x: 10, y: 0 } } }, c);
  t.teardown(() => connector.stop());
  await connector.run({ location: 'hall' }, new AbortController().signal);
  await statusSeen(c, 'EXECUTING');
  const began = Date.now();
  await connector.halt!();
  const took = Date.now() - began;
  t.ok(took >= 900 && took < 2000, `halt waited its second and resolved (${took} ms)`);
  t.match(await nav2.waitLine(/^cancel /, 5_000), / ignored$/, 'the request reached the peer, which kept quiet');
  t.match(
    c.lines.at(-1),
    /^\[navigate\] halt: NO ANSWER from Nav2's \/navigate_to_pose\/_action\/cancel_goal within 1 s \(it did not answer\): the goal hall may still be driven; stop the robot on its own controls$/,
  );
  t.match(c.context.at(-1), { navigation_status: 'EXECUTING' }, 'nothing claims the goal ended');
  await nav2.stop();
  // DDS drops the gone service's match on its own time: halt again (each waits its second) until halt sees it gone.
  const deadline = Date.now() + 10_000;
  do await connector.halt!();
  while (!/no cancel service is there/.test(c.lines.at(-1) ?? '') && Date.now() < deadline);
  t.match(c.lines.at(-1), /NO ANSWER from Nav2's .* within 1 s \(no cancel service is there\)/, 'Nav2 gone: said so, by name');
});

/** A model that sends the robot to the hall when told "go". */
const toHall = scriptedLlm('ScriptedLLM', (user, _signal, { call, nothing }) =>
  /\bgo\b/.test(user) ? call('navigate_location', { location: 'hall' }) : nothing,
);

t.test("the governor's e-stop cancels the goal Nav2 drives (the whole agent: model, action, governor)", async (t) => {
  requireBuild();
  const nav2 = await startPeer('nav2', domain + 4, ['30']);
  t.teardown(() => nav2.stop());
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'nav',
    default_mode: 'drive',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    cortex_llm: { type: 'ScriptedLLM', config: {} },
    modes: {
      drive: {
        display_name: 'Drive',
        description: 'd',
        system_prompt_base: 'you drive',
        hertz: 20,
        agent_inputs: [{ type: 'TextInput', config: { source: 'stdin', descriptor: 'Voice' } }],
        agent_actions: [
          {
            name: 'navigate_location',
            llm_label: 'navigate_location',
            connector: 'nav2',
            config: { robot: 'unitree_go2', binding: 'ros2', domain_id: domain + 4, locations: { hall: { x: 10, y: 0 } } },
          },
        ],
      },
    },
    safety: { estop_socket: { enabled: false }, deadman_seconds: 600 },
  });
  const loaded = { file: 'x', configName: 'nav', legacy: false, config, apiKey: '', addresses: {}, warnings: [] } as unknown as LoadedConfig;
  const lines: string[] = [];
  const agent = new Agent({
    loaded,
    plugins: await resolvePlugins(withPlugins(builtinPlugins, { llms: [toHall] }), loaded.config),
    logger: createLogger({ level: 'silent', pretty: false }),
    stateDir: mkdtempSync(join(tmpdir(), 'cortexd-nav-state-')),
    memory: false,
    runtimeDir: false,
    shutdownBudgetMs: 2000,
    closeBudgetMs: 2000,
    write: (l) => lines.push(l),
  });
  const events: AgentEvent[] = [];
  agent.bus.events$.subscribe((e) => events.push(e));
  t.teardown(async () => {
    agent.stop('test over');
    await agent.done;
  });
  agent.start();
  await until('the first tick', () => events.find((e) => e.type === 'tick'), 10_000);
  agent.pushText('go to the hall');
  await nav2.waitLine(/^goal /, 20_000);
  await until('EXECUTING', () => lines.find((l) => /hall: EXECUTING/.test(l)), 10_000);
  agent.estop('test e-stop', 'test');
  t.match(await nav2.waitLine(/^cancel /, 5_000), / 0 answered$/, 'the cancel of every goal reached Nav2');
  t.ok(await nav2.waitLine(/^canceled$/, 5_000), 'Nav2 stopped driving the goal');
  t.ok(await until('the halt says so', () => lines.find((l) => /halt: Nav2 accepted the cancel of hall/.test(l)), 5_000));
  t.ok(await until('CANCELED', () => lines.find((l) => /hall: CANCELED/.test(l)), 5_000));
});

t.test('no map server: a clear error naming it; no Nav2: the goal is not sent, and says why', async (t) => {
  const c = ctx();
  const dead = createNav2Connector({ binding: 'sim', locations_url: 'http://127.0.0.1:9/maps/locations/list', timeout_seconds: 2 }, c);
  await t.rejects(dead.run({ location: 'kitchen' }, new AbortController().signal), {
    message: /the map server at http:\/\/127\.0\.0\.1:9\/maps\/locations\/list did not answer/,
  });
  const lonely = createNav2Connector({ binding: 'ros2', domain_id: domain + 1, locations: { dock: { x: 1, y: 1 } } }, c);
  t.teardown(() => lonely.stop());
  await t.rejects(lonely.run({ location: 'dock' }, new AbortController().signal), {
    message: /no subscriber of \/goal_pose .* \(is Nav2 running\?\); no goal was sent/,
  });
  t.throws(() => createNav2Connector({ binding: 'sim' }, c), { message: /no places: give locations/ });
});

t.test('the simulated body drives to the place, faces its heading, and stops where it is when the command is aborted', async (t) => {
  const bodies = new BodyBoard();
  const c = ctx({ bodies });
  const connector = createNav2Connector(
    { robot: 'unitree_go2', binding: 'sim', locations: { desk: { x: 0.3, y: 0.4, heading: 180 }, hall: { x: 10, y: 0 } }, sim_speed_mps: 1 },
    c,
  );
  await connector.run({ location: 'desk' }, new AbortController().signal);
  const body = bodies.of('unitree_go2', () => new SimBody('unitree_go2', { start_battery_percent: 100, drain_percent_per_minute: 0 }));
  const at = body.read();
  t.ok(Math.abs(at.x - 0.3) < 0.001 && Math.abs(at.y - 0.4) < 0.001, `at the desk (${at.x}, ${at.y})`);
  t.equal(Math.abs(at.heading), 180);
  t.match(c.context.at(-1), { navigation_status: 'SUCCEEDED', navigating: false, navigation_goal: 'desk' });
  const abort = new AbortController();
  const going = connector.run({ location: 'hall' }, abort.signal);
  setTimeout(() => abort.abort(new Error('halted')), 1000);
  await t.rejects(going, { message: 'halted' });
  const stopped = body.read();
  t.ok(stopped.x < 5, `stopped on the way (x ${stopped.x})`);
  t.match(c.context.at(-1), { navigation_status: 'CANCELED', navigating: false, navigation_goal: 'hall' });
});
