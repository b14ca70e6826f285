// Proves rule firing in the running mode machine: each transition type, priority, ties, cooldown (also for "*"), manual refusals.
import t from 'tap';
import { config, mode, start } from '../fixtures/modes/harness.js';

const kw = (from: string, to: string, keywords: string[], priority = 1, extra: Record<string, unknown> = {}) => ({
  from_mode: from,
  to_mode: to,
  transition_type: 'input_triggered',
  trigger_keywords: keywords,
  priority,
  ...extra,
});

t.test('input_triggered: a keyword in the text switches mode, a non-matching word does not', async (t) => {
  const m = start(config({ transition_rules: [kw('a', 'b', ['stop'])] }));
  await m.active('a');
  m.actor.send({ type: 'input.text', text: 'look at my stopwatch' });
  await m.flush();
  t.equal(m.current(), 'a', '"stop" does not fire on "stopwatch"');
  m.actor.send({ type: 'input.text', text: 'Please STOP now' });
  await m.active('b');
  const changed = m.of('mode.changed');
  t.equal(changed.length, 1);
  t.match(changed[0], { from: 'a', to: 'b', rule_index: 0, trigger: 'input_triggered', reason: 'keyword "stop"' });
  t.same(m.actor.getSnapshot().context.lastTransition?.to, 'b');
  m.actor.stop();
});

t.test('highest priority wins among matching rules; ties go to the rule listed first', async (t) => {
  const rules = [kw('a', 'b', ['go'], 1), kw('a', 'c', ['go'], 5), kw('b', 'a', ['back'], 2), kw('b', 'c', ['back'], 2)];
  const m = start(config({ transition_rules: rules }));
  await m.active('a');
  m.actor.send({ type: 'input.text', text: 'go' });
  await m.active('c');
  t.equal(m.of('mode.changed')[0]?.rule_index, 1, 'priority 5 beats priority 1 listed earlier');

  const m2 = start(config({ default_mode: 'b', transition_rules: rules }));
  await m2.active('b');
  m2.actor.send({ type: 'input.text', text: 'back' });
  await m2.active('a');
  t.equal(m2.of('mode.changed')[0]?.rule_index, 2, 'equal priority: the first listed rule wins');
  m.actor.stop();
  m2.actor.stop();
});

t.test('cooldown is kept per rule, also for "*" rules, and a cooling rule lets the next match fire', async (t) => {
  const rules = [kw('*', 'a', ['home'], 5, { cooldown_seconds: 10 }), kw('a', 'b', ['go'], 1), kw('b', 'c', ['home', 'next'], 1)];
  const m = start(config({ transition_rules: rules }));
  await m.active('a');
  m.actor.send({ type: 'input.text', text: 'go' });
  await m.active('b');
  m.actor.send({ type: 'input.text', text: 'home' });
  await m.active('a');
  t.equal(m.of('mode.changed')[1]?.rule_index, 0, '"*" rule fired from b');
  m.clock.increment(1000);
  m.actor.send({ type: 'input.text', text: 'go' });
  await m.active('b');
  m.actor.send({ type: 'input.text', text: 'home' });
  await m.active('c');
  t.equal(m.of('mode.changed')[3]?.rule_index, 2, 'the "*" rule is cooling down (fired 1 s ago from another mode), so the lower rule fires');
  m.clock.increment(9000);
  m.actor.send({ type: 'input.text', text: 'home' });
  await m.active('a');
  t.equal(m.of('mode.changed')[4]?.rule_index, 0, 'after 10 s the "*" rule fires again');
  m.actor.stop();
});

t.test('a "*" rule never fires towards the current mode', async (t) => {
  const m = start(config({ transition_rules: [kw('*', 'a', ['reset'], 9), kw('a', 'b', ['reset'], 1)] }));
  await m.active('a');
  m.actor.send({ type: 'input.text', text: 'reset' });
  await m.active('b');
  t.equal(m.of('mode.changed')[0]?.rule_index, 1);
  m.actor.stop();
});

t.test('context_aware: conditions evaluated on context.update', async (t) => {
  const rules = [
    { from_mode: 'a', to_mode: 'b', transition_type: 'context_aware', priority: 1, context_conditions: { battery: { max: 20 }, docked: false } },
    { from_mode: 'b', to_mode: 'c', transition_type: 'context_aware', priority: 1, context_conditions: { person: ['alice', 'bob'] } },
  ];
  const m = start(config({ transition_rules: rules }));
  await m.active('a');
  m.actor.send({ type: 'context.update', key: 'battery', value: 15 });
  await m.flush();
  t.equal(m.current(), 'a', 'one condition of two is not enough');
  m.actor.send({ type: 'context.update', values: { docked: false } });
  await m.active('b');
  t.match(m.of('mode.changed')[0], { trigger: 'context_aware', reason: 'context battery <= 20 and docked = false' });
  m.actor.send({ type: 'context.update', key: 'person', value: 'carol' });
  await m.flush();
  t.equal(m.current(), 'b');
  m.actor.send({ type: 'context.update', key: 'person', value: 'bob' });
  await m.active('c');
  m.actor.stop();
});

t.test('time_based with its own timeout_seconds fires after that time in the mode', async (t) => {
  const rules = [{ from_mode: 'a', to_mode: 'b', transition_type: 'time_based', priority: 1, timeout_seconds: 30 }];
  const m = start(config({ transition_rules: rules }));
  await m.active('a');
  m.clock.increment(29_000);
  await m.flush();
  t.equal(m.current(), 'a');
  m.clock.increment(1000);
  await m.active('b');
  t.match(m.of('mode.changed')[0], { trigger: 'time_based', rule_index: 0, at: 30_000 });
  t.equal(m.of('mode.timeout').length, 0, 'a rule timer is not a mode timeout: no on_timeout');
  m.actor.stop();
});

t.test('manual switching: allowed, refused when disabled, refused for unknown or current mode, restricted by manual rules', async (t) => {
  const m = start(config());
  await m.active('a');
  m.actor.send({ type: 'mode.switch', mode: 'nope' });
  m.actor.send({ type: 'mode.switch', mode: 'a' });
  await m.flush();
  t.match(m.of('mode.refused'), [
    { requested: 'nope', reason: /unknown mode "nope"/ },
    { requested: 'a', reason: /already in mode/ },
  ]);
  m.actor.send({ type: 'mode.switch', mode: 'c', reason: 'operator' });
  await m.active('c');
  t.match(m.of('mode.changed')[0], { trigger: 'manual', rule_index: null, reason: 'manual: operator' });

  const off = start(config({ allow_manual_switching: false }));
  await off.active('a');
  off.actor.send({ type: 'mode.switch', mode: 'b' });
  await off.flush();
  t.equal(off.current(), 'a');
  t.match(off.of('mode.refused')[0], { requested: 'b', reason: /allow_manual_switching is false/ });

  const manualRule = { from_mode: 'a', to_mode: 'b', transition_type: 'manual', priority: 1, cooldown_seconds: 5 };
  const r = start(config({ transition_rules: [manualRule] }));
  await r.active('a');
  r.actor.send({ type: 'mode.switch', mode: 'c' });
  await r.flush();
  t.match(r.of('mode.refused')[0], { reason: /no manual rule allows "a" -> "c"/ });
  r.actor.send({ type: 'mode.switch', mode: 'b' });
  await r.active('b');
  t.equal(r.of('mode.changed')[0]?.rule_index, 0);
  m.actor.stop();
  off.actor.stop();
  r.actor.stop();
});

t.test('a time_based rule without its own timeout waits for the mode timeout; mode memory of values unaffected', async (t) => {
  const cfg = config({
    modes: { a: mode({ timeout_seconds: 60 }), b: mode() },
    transition_rules: [{ from_mode: '*', to_mode: 'b', transition_type: 'time_based', priority: 1 }],
  });
  const m = start(cfg);
  await m.active('a');
  m.clock.increment(60_000);
  await m.active('b');
  t.match(m.of('mode.changed')[0], { trigger: 'time_based', reason: 'mode timeout', at: 60_000 });
  t.equal(m.of('mode.timeout').length, 1);
  m.actor.stop();
});
