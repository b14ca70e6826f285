// `cortexd run` with the embedded service and WebSim, both started after the first tick: a model call on tick 1 still gets its answer, WebSim is reachable, a stop during their start leaves nothing behind, a service that cannot start ends the run with why.
import t from 'tap';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentEvent } from '../../src/cortex/events.js';
import { built, startAgent, workDir } from '../helpers/agent-process.js';

t.setTimeout(300_000);

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

const config = (socket: string, skipIdle: boolean, startup = '') => `{
  version: "v1.0.5", name: "first", default_mode: "m", allow_manual_switching: false, mode_memory_enabled: false,
  api_key: "", system_governance: "obey", service: { base_url: "embedded" },
  cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini", skip_idle: ${skipIdle} } },
  global_lifecycle_hooks: [${startup}],
  modes: { m: { display_name: "M", description: "d", system_prompt_base: "You are a robot.", hertz: 1,
    agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${socket}", descriptor: "Voice" } }],
    agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }],
    simulators: [{ type: "WebSim" }] } },
}`;

t.test(
  'the first tick calls the model before the service is up: the call waits for it and is answered; WebSim listens after the tick',
  { skip: !built && 'run `npm run build` first' },
  async (t) => {
    const w = workDir();
    const file = w.file('first.json5');
    writeFileSync(file, config(w.socket, false));
    const agent = startAgent(file, w.state, ['--for', '60s', '--websim-port', '0']);
    t.teardown(() => void agent.child.kill('SIGKILL'));
    const tick = await agent.waitFor<Ev<'tick'>>((e) => e.type === 'tick', 60_000, 'the first tick');
    t.match(tick, { n: 0, called_model: true }, 'tick 1 called the model');
    const answer = agent.events.find((e): e is Ev<'model.answer'> => e.type === 'model.answer');
    // The embedded service meters what it answers: a cost is its answer, not a local fallback.
    t.ok(answer && answer.tick === 0 && (answer.cost_cu ?? 0) >= 1, `the service answered tick 1 before it ended (${JSON.stringify(answer)})`);
    t.same(
      agent.events.filter((e) => e.type === 'error'),
      [],
      'no error',
    );
    const ready = await agent.waitFor<Ev<'simulator.ready'>>((e) => e.type === 'simulator.ready', 30_000, 'WebSim ready');
    t.ok(agent.events.indexOf(ready) > agent.events.indexOf(tick), 'WebSim did its start-up after the first tick');
    const page = await fetch(ready.url);
    t.equal(page.status, 200, 'the WebSim page is reachable');
    t.match(await page.text(), /<html/i);
    agent.child.kill('SIGTERM');
    t.equal(await agent.exited, 0, 'SIGTERM: exit 0');
  },
);

t.test(
  'SIGTERM at the first tick, while the service and WebSim start: exit 0, no working directory or open database left',
  { skip: !built && 'run `npm run build` first' },
  async (t) => {
    const w = workDir();
    const tmp = join(w.dir, 'tmp');
    mkdirSync(tmp);
    const file = w.file('first.json5');
    writeFileSync(file, config(w.socket, true));
    const agent = startAgent(file, w.state, ['--for', '60s', '--websim-port', '0'], { TMPDIR: tmp });
    t.teardown(() => void agent.child.kill('SIGKILL'));
    await agent.waitFor((e) => e.type === 'tick', 60_000, 'the first tick');
    agent.child.kill('SIGTERM');
    t.equal(await agent.exited, 0, 'exit 0');
    t.same(
      readdirSync(tmp).filter((f) => f.startsWith('cortexd-cloud-')),
      [],
      'the service removed its working directory',
    );
    t.notOk(existsSync(join(w.state, 'cloud.sqlite-wal')), 'the database was closed (no write-ahead log left)');
    t.notOk(agent.stderr().includes('Error'), 'nothing failed on the way out');
  },
);

t.test('a service that cannot start ends the run: exit 1 and one line that says why', { skip: !built && 'run `npm run build` first' }, async (t) => {
  const w = workDir();
  mkdirSync(join(w.state, 'cloud.sqlite'), { recursive: true });
  const file = w.file('first.json5');
  writeFileSync(file, config(w.socket, true));
  const agent = startAgent(file, w.state, ['--for', '60s', '--websim-port', '0']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  t.equal(await agent.exited, 1, 'exit 1');
  t.match(agent.stderr(), /^cortexd: cannot start the service: .*cloud\.sqlite/m, 'the reason, with the file');
  t.ok(
    agent.events.some((e) => e.type === 'agent.stopping' && /cannot start the service/.test(e.reason)),
    'the agent was stopped for it',
  );
});

t.test(
  'stopped before the first tick (a long on_startup hook): neither the service nor WebSim started, exit 0, nothing left',
  { skip: !built && 'run `npm run build` first' },
  async (t) => {
    const w = workDir();
    const tmp = join(w.dir, 'tmp');
    mkdirSync(tmp);
    const file = w.file('first.json5');
    writeFileSync(file, config(w.socket, true, '{ hook_type: "on_startup", handler_type: "command", handler_config: { command: "sleep 5" } }'));
    const agent = startAgent(file, w.state, ['--for', '300ms', '--websim-port', '0'], { TMPDIR: tmp });
    t.teardown(() => void agent.child.kill('SIGKILL'));
    t.equal(await agent.exited, 0, 'exit 0');
    t.same(
      agent.events.filter((e) => e.type === 'tick' || e.type === 'simulator.ready').map((e) => e.type),
      [],
      'no tick, and WebSim never listened',
    );
    t.same(readdirSync(tmp), [], 'the service never opened (no working directory)');
    t.notOk(existsSync(join(w.state, 'cloud.sqlite')), 'nor its database');
  },
);
