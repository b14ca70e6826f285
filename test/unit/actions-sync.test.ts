// Proves the one-step path of connectors that end commands as they return (runSync): done before dispatch returns, nothing left listening, motion still gated by the governor.
import { getEventListeners } from 'node:events';
import t from 'tap';
import { pino } from 'pino';
import { createActionHandle } from '../../actors/actions/action.js';
import { builtinPlugins, resolvePlugins } from '../../actors/plugin-registry.js';
import type { ActionConfig } from '../../src/config/schema.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { startGovernor } from '../helpers/governor.js';

type ActionEv = Extract<AgentEvent, { type: 'action' }>;

const entry = (name: string): ActionConfig => ({
  name,
  llm_label: name,
  connector: 'console',
  implementation: 'passthrough',
  config: {},
  exclude_from_prompt: false,
});
const plugins = await resolvePlugins(builtinPlugins, {
  modes: { m: { agent_inputs: [], simulators: [], agent_actions: [entry('speak'), entry('move')] } },
});

function setup() {
  const bus = new AgentBus();
  const events: string[] = [];
  bus.events$.subscribe((e) => e.type === 'action' && events.push(`${e.label} ${e.state}${(e as ActionEv).error ? `: ${(e as ActionEv).error}` : ''}`));
  const lines: string[] = [];
  const deps = { logger: pino({ level: 'silent' }), bus, mode: 'm', stateDir: '/nonexistent', write: (l: string) => lines.push(l), plugins };
  return { bus, events, lines, deps };
}

const failure = (p: Promise<void>) =>
  p.then(
    () => undefined,
    (e: { state?: string; message?: string }) => ({ state: e.state, message: e.message }),
  );

t.test('a console command is queued, running and done before dispatch returns, and run() leaves no listener on its signal', async (t) => {
  const { events, lines, deps } = setup();
  const handle = createActionHandle(entry('speak'), deps);
  handle.dispatch({ sentence: 'one' }, 'model');
  t.same(events, ['speak queued', 'speak running', 'speak done'], 'all three in the dispatch call');
  t.same(lines, ['[speak] one']);

  const ac = new AbortController();
  const ran = handle.run({ sentence: 'two' }, ac.signal);
  t.equal(getEventListeners(ac.signal, 'abort').length, 0, 'a settled command leaves nothing on the caller signal');
  await ran;
  const bad = handle.run({ sentence: 42 }, ac.signal);
  t.equal(getEventListeners(ac.signal, 'abort').length, 0, 'nor does an invalid value');
  t.match(await failure(bad), { state: 'failed', message: /invalid value for speak/ });
  t.equal(handle.queueLength, 0);
  t.same(lines, ['[speak] one', '[speak] two']);
  await handle.stop();
  handle.dispatch({ sentence: 'late' }, 'model');
  t.equal(events.at(-1), `speak dropped: action stopped`, 'a stopped action drops as before');
  t.same(lines, ['[speak] one', '[speak] two']);
});

t.test('a runSync motion connector still asks the governor: granted runs, refused and ungoverned never move', async (t) => {
  const { events, lines, deps, bus } = setup();
  const governor = startGovernor({}, { bus, modes: { m: { allowed_values: ['sit'] } } });
  const handle = createActionHandle(entry('move'), deps, { safety: governor.actor });
  await handle.run({ action: 'sit' }, new AbortController().signal);
  t.same(lines, ['[move] sit']);
  t.match(await failure(handle.run({ action: 'dance' }, new AbortController().signal)), {
    state: 'failed',
    message: /refused by the safety governor: .*not allowed/,
  });
  t.same(lines, ['[move] sit'], 'a refused command is not printed');
  await handle.stop();
  governor.stop();
  t.same(lines, ['[move] sit', '[move] stand still'], 'stopping the action halts it');

  const lone = createActionHandle(entry('move'), deps);
  t.match(await failure(lone.run({ action: 'sit' }, new AbortController().signal)), { state: 'failed', message: /no safety governor is running/ });
  t.same(lines, ['[move] sit', '[move] stand still'], 'nothing moves without a governor');
  await lone.stop();
  t.match(events.slice(0, 4), ['move queued', 'move running', 'move done', 'move queued']);
});
