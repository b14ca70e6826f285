// Proves a model that keeps failing is a health problem everywhere the bus reaches: the governor stops and pauses motion as for a stalled model, the fleet state and WebSim show it, and an answer clears it.
import t from 'tap';
import { pino } from 'pino';
import { createActionHandle } from '../../actors/actions/action.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { StateReducer } from '../../src/fleet/state.js';
import { RobotState } from '../../src/fleet/protocol.js';
import { initialState, reduce } from '../../src/websim/page/state.js';
import { startGovernor, wireRig } from '../helpers/governor.js';

const failing: AgentEvent = { type: 'model', at: 10, mode: 'm', model: 'LocalLLM m', state: 'failing', reason: 'POST /chat/completions: 503', failures: 3 };
const healthy: AgentEvent = { type: 'model', at: 20, mode: 'm', model: 'LocalLLM m', state: 'healthy' };
t.test('the governor treats a failing model as stalled: motion stops and is refused until it is healthy', async (t) => {
  const { wire, entry, plugins, settle } = await wireRig();
  const bus = new AgentBus();
  const events: AgentEvent[] = [];
  bus.events$.subscribe((e) => events.push(e));
  const governor = startGovernor({ deadman_seconds: 60 } as never, { bus });
  const handle = createActionHandle(
    entry,
    { logger: pino({ level: 'silent' }), bus, mode: 'm', stateDir: '/nonexistent', write: () => {}, plugins },
    { safety: governor.actor },
  );
  t.teardown(async () => {
    await handle.stop();
    governor.stop();
  });
  const go = async (action: string) => {
    handle.dispatch({ action }, 'model');
    await settle();
    return events.filter((e): e is Extract<AgentEvent, { type: 'action' }> => e.type === 'action').at(-1)!;
  };
  t.equal((await go('walk forward')).state, 'done');
  bus.emit(failing);
  // The per-call error that follows does not clear it (with stop_on_service_loss off it clears only its own fault).
  bus.emit({ type: 'model.error', at: 11, mode: 'm', tick: 3, error: '503' });
  await settle();
  const stop = events.filter((e): e is Extract<AgentEvent, { type: 'safety' }> => e.type === 'safety' && e.kind === 'stop').at(-1);
  t.match(stop, { cause: 'model_stall', reason: /LocalLLM m keeps failing \(3 calls in a row: POST \/chat\/completions: 503\)/ });
  t.ok(wire.includes('STOP'), 'the stop reached the wire');
  t.match(await go('walk forward'), { state: 'failed', error: /motion is paused while model health: LocalLLM m keeps failing/ });
  // As a call that succeeds reports it: the plugin says healthy, then the tick puts the answer on the bus.
  bus.emit(healthy);
  await settle();
  t.match(await go('walk forward'), { state: 'failed' }, 'the failed call itself still pauses motion until an answer');
  bus.emit({ type: 'model.answer', at: 21, mode: 'm', tick: 4, model: 'LocalLLM m', tool_calls: [], latency_ms: 5 });
  await settle();
  t.match(await go('walk forward'), { state: 'done' }, 'healthy again: motion allowed');
});

t.test('the fleet state shows the failing model, and a streaming_off model as still healthy', async (t) => {
  const r = new StateReducer({ robot: 'r1', config: 'c', version: '1', mode: 'm', modes: { m: { inputs: [], actions: [] } }, estopEngaged: false, now: 0 });
  t.ok(r.apply({ type: 'model', at: 5, mode: 'm', model: 'LocalLLM m', state: 'streaming_off', reason: 'unreadable chunk' }));
  t.equal(r.current.health.ok, true, 'asked whole, the model still works');
  t.ok(r.apply(failing));
  t.equal(r.current.health.ok, false);
  t.match(r.current.health.models!['LocalLLM m'], { state: 'failing', detail: /503/, since: 10 });
  t.ok(RobotState.safeParse(r.current).success, 'the published state fits the fleet protocol');
  t.ok(r.apply(healthy));
  t.equal(r.current.health.ok, true);
  t.equal(r.current.health.models!['LocalLLM m']!.state, 'ok');
});

t.test('WebSim keeps the model health for its answer panel', async (t) => {
  let s = reduce(initialState('m'), failing as never);
  t.match(s.modelHealth, { model: 'LocalLLM m', state: 'failing', reason: /503/ });
  s = reduce(s, healthy as never);
  t.equal(s.modelHealth!.state, 'healthy');
});
