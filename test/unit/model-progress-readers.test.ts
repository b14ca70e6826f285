// Proves the readers of the bus take `model.progress` (a streamed answer arriving) in their stride: no terminal line, no metric, no WebSim or fleet state change, nothing on the fleet's events topic.
import t from 'tap';
import { TerminalView } from '../../cli/view.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { operatorEvent } from '../../src/fleet/events.js';
import { MetricsFold } from '../../src/fleet/metrics.js';
import { StateReducer } from '../../src/fleet/state.js';
import { Metrics } from '../../src/metrics/prometheus.js';
import { feedMetrics } from '../../src/metrics/feed.js';
import { initialState, reduce } from '../../src/websim/page/state.js';

const at = 1_700_000_000_000;
const progress: AgentEvent[] = (['first_token', 'sentence', 'tool_call'] as const).map((stage, i) => ({
  type: 'model.progress',
  at: at + i,
  mode: 'm',
  tick: 1,
  stage,
}));

t.test('the terminal view shows no line for progress; the answer still gets its line', async (t) => {
  const lines: string[] = [];
  const v = new TerminalView({ color: false, write: (text) => lines.push(...text.split('\n').filter(Boolean)) });
  for (const e of progress) v.render(e);
  t.same(lines, [], 'no line per sentence or tool call');
  v.render({ type: 'model.answer', at, mode: 'm', tick: 1, model: 'x', tool_calls: [{ name: 'move', arguments: { action: 'turn left' } }], latency_ms: 900 });
  t.match(lines, [/model x 900 ms: move\(turn left\)/]);
});

t.test('metrics: progress is not a model call and moves no series', async (t) => {
  const bus = new AgentBus();
  const metrics = new Metrics({ defaultMetrics: false });
  const sub = feedMetrics(bus, metrics, { hertzOf: () => 1 });
  t.teardown(() => sub.unsubscribe());
  const before = await metrics.scrape();
  for (const e of progress) bus.emit(e);
  t.equal(await metrics.scrape(), before);
  const fold = new MetricsFold('r1', at);
  const empty = JSON.stringify(fold.take(at + 10, 0));
  const fold2 = new MetricsFold('r1', at);
  for (const e of progress) fold2.apply(e);
  t.equal(JSON.stringify(fold2.take(at + 10, 0)), empty, 'the fleet metrics count no call either');
});

t.test('WebSim and the fleet state do not change; the fleet events topic does not carry it', async (t) => {
  const s = initialState('m');
  t.equal(
    progress.reduce((acc, e) => reduce(acc, e as never), s),
    s,
    'the same WebSim state',
  );
  const r = new StateReducer({ robot: 'r1', config: 'c', version: '1', mode: 'm', modes: { m: { inputs: [], actions: [] } }, estopEngaged: false, now: 0 });
  for (const e of progress) t.equal(r.apply(e), false, 'the fleet state is unchanged');
  for (const e of progress) t.equal(operatorEvent(e, true), undefined, 'not an operator event');
});
