// Proves lifecycle hooks in the mode machine: order, priority, sync timeouts, async cancellation, on_failure, abort and rollback.
import t from 'tap';
import { config, hook, mode, start } from '../fixtures/modes/harness.js';
import type { DispatchActionFn } from '../../actors/modes/types.js';

const note = { name: 'note', llm_label: 'note', connector: 'test' };
const act = (hook_type: string, value: string, extra: Record<string, unknown> = {}) => hook(hook_type, 'action', { action: 'note', value }, extra);

/** A dispatcher that records `mode:value` in `timeline`; values starting with "fail" reject, "hang" waits for abort. */
function recorder(timeline: string[]): { dispatch: DispatchActionFn; aborted: string[] } {
  const aborted: string[] = [];
  const dispatch: DispatchActionFn = (_label, value, signal, m) => {
    const v = String(value);
    timeline.push(`${m}:${v}`);
    if (v.startsWith('fail')) return Promise.reject(new Error(`${v} failed`));
    if (v.startsWith('hang')) {
      return new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => {
          aborted.push(v);
          resolve();
        }),
      );
    }
    return Promise.resolve();
  };
  return { dispatch, aborted };
}

function modes(hooks: Record<string, unknown[]>, extra: Record<string, Record<string, unknown>> = {}) {
  const out: Record<string, unknown> = {};
  for (const name of ['a', 'b', 'c']) out[name] = mode({ agent_actions: [note], lifecycle_hooks: hooks[name] ?? [], ...extra[name] });
  return out;
}

const toB = [{ from_mode: 'a', to_mode: 'b', transition_type: 'input_triggered', trigger_keywords: ['go'], priority: 1 }];

t.test('a switch runs exit hooks of the old mode, then changes state, then entry hooks of the new mode', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const m = start(config({ modes: modes({ a: [act('on_exit', 'bye-a')], b: [act('on_entry', 'hello-b')] }), transition_rules: toB }), {
    dispatchAction: dispatch,
  });
  m.actor.on('mode.changed', (e) => void timeline.push(`changed:${e.from}->${e.to}`));
  await m.active('a');
  m.actor.send({ type: 'input.text', text: 'go' });
  await m.active('b');
  t.same(timeline, ['a:bye-a', 'changed:a->b', 'b:hello-b']);
  m.actor.stop();
});

t.test('hooks of one event run highest priority first; ties keep the written order with global hooks first', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const cfg = config({
    modes: modes({ a: [act('on_entry', 'p1', { priority: 1 }), act('on_entry', 'p5', { priority: 5 }), act('on_entry', 'p1-second', { priority: 1 })] }),
    global_lifecycle_hooks: [act('on_entry', 'global-p1', { priority: 1 }), act('on_startup', 'startup')],
  });
  const m = start(cfg, { dispatchAction: dispatch });
  await m.active('a');
  t.same(timeline, ['a:startup', 'a:p5', 'a:global-p1', 'a:p1', 'a:p1-second']);
  m.actor.stop();
});

t.test('a synchronous hook is bounded by its timeout, then the next hook runs', async (t) => {
  const timeline: string[] = [];
  const { dispatch, aborted } = recorder(timeline);
  const cfg = config({ modes: modes({ a: [act('on_entry', 'hang', { priority: 2, timeout_seconds: 3 }), act('on_entry', 'after', { priority: 1 })] }) });
  const m = start(cfg, { dispatchAction: dispatch });
  await m.reach('a', 'entering');
  await m.flush();
  t.same(timeline, ['a:hang'], 'the second hook waits for the first');
  m.clock.increment(2999);
  await m.flush();
  t.same(timeline, ['a:hang']);
  m.clock.increment(1);
  await m.active('a');
  t.same(timeline, ['a:hang', 'a:after']);
  t.same(aborted, ['hang'], 'the timed-out handler saw its signal abort');
  t.match(m.of('hook.failed')[0], { hook_type: 'on_entry', on_failure: 'log', error: /timed out after 3 s/ });
  m.actor.stop();
});

t.test('an async hook is started and the event goes on; it is still cancelled at its timeout', async (t) => {
  const timeline: string[] = [];
  const { dispatch, aborted } = recorder(timeline);
  const cfg = config({
    modes: modes({ a: [act('on_entry', 'hang-async', { priority: 2, async_execution: true, timeout_seconds: 4 }), act('on_entry', 'next', { priority: 1 })] }),
  });
  const m = start(cfg, { dispatchAction: dispatch });
  await m.active('a');
  t.same(timeline, ['a:hang-async', 'a:next'], 'the next hook did not wait');
  t.same(aborted, []);
  m.clock.increment(4000);
  await m.flush();
  t.same(aborted, ['hang-async'], 'cancelled at its own timeout');
  t.ok(m.log.messages().some((l) => /on_entry hook action "note" of mode "a" failed: timed out after 4 s/.test(l)));
  m.actor.stop();
});

t.test('on_failure: log reports and goes on, ignore goes on silently, abort stops the remaining hooks of the event', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const cfg = config({
    modes: modes({
      a: [
        act('on_exit', 'fail-log', { priority: 9 }),
        act('on_exit', 'fail-ignore', { priority: 8, on_failure: 'ignore' }),
        act('on_exit', 'fail-abort', { priority: 7, on_failure: 'abort' }),
        act('on_exit', 'never', { priority: 6 }),
      ],
    }),
    transition_rules: toB,
  });
  const m = start(cfg, { dispatchAction: dispatch });
  await m.active('a');
  m.actor.send({ type: 'input.text', text: 'go' });
  await m.active('b');
  t.same(timeline, ['a:fail-log', 'a:fail-ignore', 'a:fail-abort'], 'abort stopped the remaining exit hooks');
  t.equal(m.current(), 'b', 'an aborted on_exit does not cancel the switch');
  t.same(
    m.of('hook.failed').map((f) => f.on_failure),
    ['log', 'abort'],
    'ignore emits no failure',
  );
  const warnings = m.log.lines.filter((l) => l.level === 40).map((l) => String(l.msg));
  t.ok(
    warnings.some((w) => w.includes('fail-log failed')),
    'log: logged as a warning',
  );
  t.notOk(
    m.log.lines.some((l) => (l.level as number) >= 40 && String(l.msg).includes('fail-ignore')),
    'ignore: nothing above debug',
  );
  t.ok(
    m.log.lines.some((l) => l.level === 50 && String(l.msg).includes('fail-abort')),
    'abort: logged as an error',
  );
  m.actor.stop();
});

t.test('an on_entry abort cancels the switch: back to the previous mode, whose entry hooks run again', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const cfg = config({
    modes: modes({
      a: [act('on_entry', 'enter-a'), act('on_exit', 'exit-a')],
      b: [act('on_entry', 'fail-b', { on_failure: 'abort' }), act('on_entry', 'never-b')],
    }),
    transition_rules: toB,
  });
  const m = start(cfg, { dispatchAction: dispatch });
  await m.active('a');
  m.actor.send({ type: 'input.text', text: 'go' });
  await m.flush();
  await m.active('a');
  t.same(timeline, ['a:enter-a', 'a:exit-a', 'b:fail-b', 'a:enter-a']);
  t.match(m.of('mode.aborted')[0], { from: 'a', to: 'b', reason: /on_entry hook action "note" failed: fail-b failed/ });
  t.match(
    m.of('mode.changed').map((c) => `${c.from}->${c.to}:${c.trigger}`),
    ['a->b:input_triggered', 'b->a:rollback'],
  );
  t.equal(m.current(), 'a');
  m.actor.stop();
});

t.test('an on_startup abort fails the start-up with the reason; the machine ends with ok false', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const cfg = config({ modes: modes({ a: [act('on_entry', 'never')] }), global_lifecycle_hooks: [act('on_startup', 'fail-start', { on_failure: 'abort' })] });
  const m = start(cfg, { dispatchAction: dispatch });
  t.equal((await m.finished()).ok, false, 'the start-up failed');
  const out = m.actor.getSnapshot().output;
  t.match(out, { ok: false, reason: /on_startup hook action "note" failed: fail-start failed/ });
  t.match(m.of('startup.failed')[0], { reason: /fail-start/ });
  t.same(timeline, ['a:fail-start'], 'no entry hook ran');

  const m2 = start(config({ modes: modes({ a: [act('on_entry', 'fail-entry', { on_failure: 'abort' })] }) }), { dispatchAction: dispatch });
  t.equal((await m2.finished()).ok, false, 'the start-up failed');
  t.match(m2.actor.getSnapshot().output, { ok: false, reason: /fail-entry/ }, 'an on_entry abort at start-up fails the start-up too');
});

t.test('on_timeout hooks run once per elapsed timeout; without a time_based rule the agent stays and the timer restarts', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const cfg = config({ modes: modes({ a: [act('on_timeout', 'timeout-a')] }, { a: { timeout_seconds: 10 } }) });
  const m = start(cfg, { dispatchAction: dispatch });
  await m.active('a');
  m.clock.increment(9999);
  await m.flush();
  t.same(timeline, []);
  m.clock.increment(1);
  await m.flush();
  await m.active('a');
  t.same(timeline, ['a:timeout-a'], 'once at 10 s');
  m.clock.increment(5000);
  await m.flush();
  t.same(timeline, ['a:timeout-a'], 'not again before the restarted timer elapses');
  m.clock.increment(5000);
  await m.flush();
  await m.active('a');
  t.same(timeline, ['a:timeout-a', 'a:timeout-a'], 'again after the restarted timer');
  t.equal(m.of('mode.timeout').length, 2);
  m.actor.stop();
});

t.test('on_timeout runs once, then the highest-priority time_based rule of the mode or "*" fires', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const cfg = config({
    modes: modes({ a: [act('on_timeout', 'timeout-a'), act('on_exit', 'exit-a')] }, { a: { timeout_seconds: 10 } }),
    transition_rules: [
      { from_mode: 'a', to_mode: 'b', transition_type: 'time_based', priority: 1 },
      { from_mode: '*', to_mode: 'c', transition_type: 'time_based', priority: 2 },
    ],
  });
  const m = start(cfg, { dispatchAction: dispatch });
  m.actor.on('mode.changed', (e) => void timeline.push(`changed:${e.from}->${e.to}`));
  await m.active('a');
  m.clock.increment(10_000);
  await m.active('c');
  t.same(timeline, ['a:timeout-a', 'a:exit-a', 'changed:a->c']);
  m.actor.stop();
});

t.test('shutdown runs the current mode on_exit, then on_shutdown of the mode and global, and stops', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const cfg = config({
    modes: modes({ a: [act('on_exit', 'exit-a'), act('on_shutdown', 'down-a')] }),
    global_lifecycle_hooks: [act('on_shutdown', 'down-global')],
  });
  const m = start(cfg, { dispatchAction: dispatch });
  await m.active('a');
  m.actor.send({ type: 'agent.shutdown' });
  t.equal((await m.finished()).ok, true, 'stopped after shutdown');
  t.same(timeline, ['a:exit-a', 'a:down-global', 'a:down-a']);
  t.match(m.actor.getSnapshot().output, { ok: true, mode: 'a' });
});

t.test('a manual switch while hooks run is refused as busy', async (t) => {
  const timeline: string[] = [];
  const { dispatch } = recorder(timeline);
  const m = start(config({ modes: modes({ a: [act('on_entry', 'hang', { timeout_seconds: 2 })] }) }), { dispatchAction: dispatch });
  await m.reach('a', 'entering');
  m.actor.send({ type: 'mode.switch', mode: 'b' });
  t.match(m.of('mode.refused')[0], { requested: 'b', reason: /in progress/ });
  m.clock.increment(2000);
  await m.active('a');
  m.actor.stop();
});
