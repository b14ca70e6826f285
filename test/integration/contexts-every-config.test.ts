// Contexts hold data in every shipped configuration as `cortexd run --simulate` runs it, and in an agent on the fleet channel: no actor's context holds a function or a class instance.
import t from 'tap';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { SerialPortMock } from 'serialport';
import { Agent } from '../../actors/agent/agent.js';
import { builtinPlugins, resolvePlugins } from '../../actors/plugin-registry.js';
import { simulateControllers } from '../../devices/serial-sim-controller.js';
import { loadAs } from '../../src/compat/om1/load.js';
import { mockSerialPaths, simulatedControllerPaths } from '../../src/config/simulate.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { connectService } from '../../src/cortex/embedded.js';
import { createLogger } from '../../src/log.js';
import { firstNonData } from '../helpers/contexts.js';
import { agentConfig, fleetBroker, USERS } from '../helpers/fleet.js';
import { onBus } from '../helpers/wait.js';
import type { Broker } from '../support/mosquitto.js';

// Ten agents one after another, each to its first ticks: a hang guard on a loaded machine.
t.setTimeout(600_000);

const ROOT = join(import.meta.dirname, '..', '..');
const tmp = mkdtempSync(join(tmpdir(), 'cortexd-contexts-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
process.env.CORTEX_STATE_DIR = join(tmp, 'state');

/** Makes the serial mock ports a simulated configuration opens, as `cortexd run --simulate` does before it starts. */
function mockPorts(config: LoadedConfig['config']): void {
  const users = config as unknown as Parameters<typeof mockSerialPaths>[0];
  for (const path of mockSerialPaths(users)) {
    try {
      SerialPortMock.binding.createPort(path);
    } catch {
      // Made for an earlier configuration of this file.
    }
  }
  simulateControllers(simulatedControllerPaths(users));
}

/**
 * Runs `loaded` in this process with every actor inspected, to its default mode's second tick (and
 * to the end of `extra`, started with the agent, when given), and returns, per actor kind, the first actor whose context is not data.
 */
async function nonDataContexts(
  t: { teardown(fn: () => unknown): void },
  loaded: LoadedConfig,
  extra?: (agent: Agent) => Promise<void>,
): Promise<{ found: Map<string, string>; actors: number }> {
  const logger = createLogger({ level: 'silent' });
  const stateDir = mkdtempSync(join(tmp, 'state-'));
  const service = await connectService(loaded, { logger, dbPath: ':memory:', stateDir });
  t.teardown(() => service.close());
  const plugins = await resolvePlugins(builtinPlugins, loaded.config);
  const found = new Map<string, string>();
  const ids = new Set<string>();
  const inspect = (e: InspectionEvent) => {
    if (e.type !== '@xstate.snapshot' && e.type !== '@xstate.actor') return;
    const ref = e.actorRef as AnyActorRef;
    ids.add(ref.sessionId);
    const snapshot = (e.type === '@xstate.snapshot' ? e.snapshot : ref.getSnapshot()) as { context?: unknown } | undefined;
    if (!snapshot || !('context' in snapshot)) return;
    const bad = firstNonData(snapshot.context);
    const kind = ref.id.split(':')[0]!;
    if (bad && !found.has(kind)) found.set(kind, `${ref.id}: ${bad}`);
  };
  const agent = new Agent({ loaded, plugins, cloud: service.cloud, logger, stateDir, runtimeDir: false, memory: false, inspect });
  const mode = loaded.config.default_mode;
  let ticks = 0;
  const ticked = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no second tick in ${mode} within 60 s`)), 60_000);
    const sub = agent.bus.events$.subscribe((e) => {
      if (e.type === 'tick' && e.mode === mode && ++ticks === 2) {
        clearTimeout(timer);
        sub.unsubscribe();
        resolve();
      }
    });
  });
  // Started before the agent, so it sees the agent's first events too; awaited after the ticks.
  const more = extra?.(agent);
  more?.catch(() => {});
  agent.start();
  try {
    await ticked;
    await more;
  } finally {
    agent.stop('test');
    await agent.done;
  }
  return { found, actors: ids.size };
}

const shipped = readdirSync(join(ROOT, 'config'))
  .filter((f) => f.endsWith('.json5'))
  .sort();

for (const file of shipped) {
  t.test(`config/${file} --simulate: every actor's context is data`, async (t) => {
    const { loaded } = await loadAs({ file: join(ROOT, 'config', file) }, { simulate: true });
    mockPorts(loaded.config);
    const { found, actors } = await nonDataContexts(t, loaded);
    t.ok(actors > 5, `${actors} actors seen`);
    t.same(Object.fromEntries(found), {}, 'no context holds a function or a class instance');
  });
}

t.test('an agent on the fleet channel (mosquitto, the shipped ACL): the fleet actor and every other hold data', async (t) => {
  let broker: Broker | undefined;
  t.teardown(async () => {
    await broker?.stop();
  });
  broker = await fleetBroker();
  const file = join(tmp, 'fleet.json5');
  writeFileSync(
    file,
    agentConfig({
      socket: join(tmp, 'fleet-in.sock'),
      fleet: { url: broker.url, username: 'r1', password: USERS.r1, robot_id: 'r1', metrics_interval_seconds: 0.5 },
    }),
  );
  const { loaded } = await loadAs({ file }, {});
  t.ok(loaded.fleet, 'the fleet block is read');
  const { found } = await nonDataContexts(t, loaded, async (agent) => {
    // Connected and published: the fleet actor's context through its first state and metrics (every 0.5 s; 5 ticks at 5 Hz).
    await onBus(agent.bus, (e) => e.type === 'fleet' && e.state === 'connected', 'the fleet channel connected', 30_000);
    let ticks = 0;
    await onBus(agent.bus, (e) => e.type === 'tick' && ++ticks === 5, 'five ticks after the fleet connected', 30_000);
  });
  t.same(Object.fromEntries(found), {}, 'no context holds a function or a class instance');
});
