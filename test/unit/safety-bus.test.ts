// The safety events on the bus reach metrics (latch gauge, e-stops, stops, refusals by cause) and the terminal view.
import t from 'tap';
import { TerminalView } from '../../cli/view.js';
import { AgentBus } from '../../src/cortex/events.js';
import { Metrics } from '../../src/metrics/prometheus.js';
import { feedMetrics } from '../../src/metrics/feed.js';

const sample = (text: string, name: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};

t.test('metrics: the latch gauge follows estop/release; e-stops by source, stops and refusals by cause', async (t) => {
  const bus = new AgentBus();
  const metrics = new Metrics({ defaultMetrics: false });
  const sub = feedMetrics(bus, metrics, { hertzOf: () => 1 });
  t.teardown(() => sub.unsubscribe());
  bus.emit({ type: 'safety', at: 1, kind: 'estop', source: 'websim', reason: 'button' });
  bus.emit({ type: 'safety', at: 2, kind: 'stop', cause: 'estop', reason: 'emergency stop (websim): button' });
  bus.emit({ type: 'safety', at: 3, kind: 'refused', cause: 'estop', reason: 'latched', label: 'move', value: 'sit' });
  let text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_safety_estop_latched'), 1);
  t.equal(sample(text, 'cortexd_safety_estops_total{source="websim"}'), 1);
  t.equal(sample(text, 'cortexd_safety_stops_total{cause="estop"}'), 1);
  t.equal(sample(text, 'cortexd_safety_refused_total{cause="estop"}'), 1);
  bus.emit({ type: 'safety', at: 4, kind: 'release', source: 'socket', reason: 'released' });
  bus.emit({ type: 'safety', at: 5, kind: 'estop', source: 'serial', reason: 'before', restored: true });
  text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_safety_estop_latched'), 1, 'a restored latch is latched');
  t.equal(sample(text, 'cortexd_safety_estops_total{source="serial"}'), undefined, 'but not a new e-stop');
});

t.test('the terminal view says who pressed the e-stop, why motion stopped and what was refused', async (t) => {
  const out: string[] = [];
  const view = new TerminalView({ write: (s) => out.push(s), color: false });
  view.render({ type: 'safety', at: 0, kind: 'estop', source: 'socket', reason: 'person in the way' });
  view.render({ type: 'safety', at: 0, kind: 'stop', cause: 'deadman', reason: 'dead-man timer: no motion command for 3 s' });
  view.render({ type: 'safety', at: 0, kind: 'refused', cause: 'estop', reason: 'emergency stop latched', label: 'move', value: 'sit' });
  view.render({ type: 'safety', at: 0, kind: 'release', source: 'websim', reason: 'released' });
  t.match(out[0], /EMERGENCY STOP by socket: person in the way - motion refused until released/);
  t.match(out[1], /safety stop \(deadman\): dead-man timer: no motion command for 3 s/);
  t.match(out[2], /safety refused move "sit": emergency stop latched/);
  t.match(out[3], /emergency stop released by websim/);
});
