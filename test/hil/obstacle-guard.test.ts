// HIL: the safety governor's obstacle guard with a running agent: a model that insists on "walk forward" toward a wall is stopped with stop_distance left, on the simulated lidar and on an RPLidar peer over a socat pty; a lidar gone quiet stops motion; turning away is allowed.
import t, { type Test } from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../../actors/agent/agent.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import { AgentConfig, type LoadedConfig } from '../../src/config/schema.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { BodyBoard } from '../../src/cortex/bodies.js';
import { simBody } from '../../devices/body/sim-body.js';
import { createLogger } from '../../src/log.js';
import { ptyPair } from '../helpers/socat-pty.js';
import { startRplidarPeer } from '../helpers/rplidar-peer.js';
import { until } from '../helpers/wait.js';
import { scriptedLlm } from '../helpers/plugins.js';

t.setTimeout(180_000);
type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

/** A model that does what the typed line says, whatever the free paths say: "go" walks forward, "turn" turns left. */
const insistent = scriptedLlm('InsistentLLM', (user, _signal, { call, nothing }) => {
  const last = user
    .split('\n')
    .filter((l) => /^\s*(go|turn)\s*$/.test(l))
    .at(-1)
    ?.trim();
  if (last === 'go') return call('move', { action: 'walk forward' });
  if (last === 'turn') return call('move', { action: 'turn left' });
  return nothing;
});
const registry = withPlugins(builtinPlugins, { llms: [insistent] });
const STOP_M = 0.4;

function loaded(lidar: Record<string, unknown>, commandSeconds = 1): LoadedConfig {
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'guard',
    default_mode: 'drive',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    cortex_llm: { type: 'InsistentLLM', config: {} },
    lidar,
    modes: {
      drive: {
        display_name: 'Drive',
        description: 'drives',
        system_prompt_base: '',
        hertz: 5,
        agent_inputs: [{ type: 'TextInput', config: { source: 'stdin' } }],
        agent_actions: [{ name: 'move', llm_label: 'move', connector: 'body', config: { step_m: 0.5, command_seconds: commandSeconds } }],
      },
    },
    safety: { estop_socket: { enabled: false }, deadman_seconds: 30, obstacle: { stop_distance_m: STOP_M, slow_distance_m: 0.8, max_scan_age_ms: 500 } },
  });
  return { file: 'x', configName: 'guard', legacy: false, config, apiKey: '', addresses: {}, warnings: [] } as unknown as LoadedConfig;
}

async function run(t: Test, l: LoadedConfig) {
  const plugins = await resolvePlugins(registry, l.config);
  const bodies = new BodyBoard();
  const agent = new Agent({
    loaded: l,
    plugins,
    logger: createLogger({ level: 'silent', pretty: false }),
    stateDir: mkdtempSync(join(tmpdir(), 'cortexd-guard-state-')),
    memory: false,
    runtimeDir: false,
    shutdownBudgetMs: 2000,
    closeBudgetMs: 2000,
    bodies,
  });
  const events: AgentEvent[] = [];
  agent.bus.events$.subscribe((e) => events.push(e));
  t.teardown(async () => {
    agent.stop('test over');
    await agent.done;
  });
  agent.start();
  const body = simBody('generic', { start_battery_percent: 100, drain_percent_per_minute: 0 }, bodies);
  const waitFor = <T extends AgentEvent>(what: string, pred: (e: AgentEvent) => boolean, ms = 60_000) =>
    until(what, () => events.find(pred) as T | undefined, ms);
  await waitFor('the lidar streaming', (e) => e.type === 'stream' && e.kind === 'lidar' && e.state === 'streaming');
  return { agent, events, body, waitFor };
}

const obstacleRefusal = (e: AgentEvent) => e.type === 'safety' && e.kind === 'refused' && e.cause === 'obstacle' && /m ahead$/.test(e.reason);

/** Says "go" until the guard refuses a walk; returns the wall distance left. */
async function insistUntilRefused(r: Awaited<ReturnType<typeof run>>, wallX: number) {
  let said = 0;
  await until(
    () => `an obstacle refusal (after ${said} orders; at x ${r.body.read().x})`,
    () => {
      if (r.events.some(obstacleRefusal)) return true;
      if (!r.events.some((e) => e.type === 'action' && e.label === 'move' && e.state === 'running')) {
        r.agent.pushText('go');
        said++;
      }
      // Every order again while the previous one runs: the model insists.
      r.agent.pushText('go');
      return false;
    },
    120_000,
    300,
  );
  return wallX - r.body.read().x;
}

t.test('simulated lidar: "walk forward" over and over toward the wall stops with at least stop_distance left, and turning away is allowed', async (t) => {
  const r = await run(t, loaded({ source: 'sim', room: { x_min: -1, x_max: 1.6, y_min: -1.5, y_max: 1.5, obstacles: [] } }));
  const left = await insistUntilRefused(r, 1.6);
  t.ok(left >= STOP_M, `${left.toFixed(3)} m left to the wall`);
  const refused = r.events.find(obstacleRefusal) as Ev<'safety'>;
  t.match(refused.reason, /^obstacle 0\.\d+ m ahead$/, refused.reason);
  for (let i = 0; i < 20; i++) r.agent.pushText('go');
  t.ok(1.6 - r.body.read().x >= STOP_M, 'the guard holds while the model insists');
  r.agent.pushText('turn');
  await r.waitFor('a turn done', (e) => e.type === 'action' && e.label === 'move' && e.state === 'done' && /turn/.test(JSON.stringify(e)));
  t.not(r.body.read().heading, 0, 'turned away from the wall');
});

t.test('RPLidar peer on a socat pty: the same insistence stops with stop_distance left; a lidar gone quiet stops a running walk', async (t) => {
  const pty = await ptyPair(t.teardown);
  const wallX = 1.6;
  const peer = await startRplidarPeer(pty.peer, { front: wallX, back: 2, left: 2, right: 2 }, t.teardown);
  const r = await run(t, loaded({ source: 'rplidar', port: pty.robot, reopen_initial_ms: 50, reopen_max_ms: 500 }));
  // The peer's room follows the simulated body: the wall comes nearer as the robot walks.
  let told = wallX;
  const follow = r.body.state$.subscribe((s) => {
    const front = Math.round((wallX - s.x) * 1000) / 1000;
    if (Math.abs(front - told) < 0.005) return;
    told = front;
    void peer.tell(`room {"front":${front}}`).catch(() => undefined);
  });
  t.teardown(() => follow.unsubscribe());
  const left = await insistUntilRefused(r, wallX);
  t.ok(left >= STOP_M, `${left.toFixed(3)} m left to the wall`);

  // Open space ahead (the wall taken away), a walk, then the sensor's motor stops mid-walk.
  follow.unsubscribe();
  await peer.tell('room {"front":3}');
  await until('the guard to see open space', () => {
    r.agent.pushText('go');
    return r.events.some((e) => e.type === 'action' && e.label === 'move' && e.state === 'running' && e.at > Date.now() - 200);
  });
  const x = r.body.read().x;
  const quiet = Date.now();
  await peer.tell('spin off');
  const stop = await r.waitFor<Ev<'safety'>>(
    'a blind stop',
    (e) => e.type === 'safety' && e.kind === 'stop' && e.cause === 'obstacle' && e.at >= quiet && /blind/.test(e.reason),
  );
  t.ok(r.body.read().x > x - 0.001, 'it had walked on into open space before the lidar went quiet');
  t.match(stop.reason, /no lidar scan for .* \(blind\)/);
});
