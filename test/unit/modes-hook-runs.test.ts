// Proves every hook run is emitted as `hook.run` (done, failed, timed out, async) with its duration, and that hook log lines name the mode.
import t from 'tap';
import { config, hook, mode, start } from '../fixtures/modes/harness.js';
import type { Clock, DispatchActionFn } from '../../actors/modes/types.js';

const note = { name: 'note', llm_label: 'note', connector: 'test' };
const act = (hook_type: string, value: string, extra: Record<string, unknown> = {}) => hook(hook_type, 'action', { action: 'note', value }, extra);

/** "ok..." resolves at once, "fail..." rejects, "wait<N>..." resolves after N ms of the clock, "hang..." waits for its abort. */
function dispatcher(clock: () => Clock): DispatchActionFn {
  return (_label, value, signal) => {
    const v = String(value);
    if (v.startsWith('fail')) return Promise.reject(new Error(`${v} failed`));
    const wait = /^wait(\d+)/.exec(v);
    if (wait) return new Promise<void>((resolve) => void clock().setTimeout(resolve, Number(wait[1])));
    if (v.startsWith('hang')) return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    return Promise.resolve();
  };
}

t.test('each hook that runs is emitted once as hook.run: ok or failed with the error, its duration on the clock, async ones when they end', async (t) => {
  let m: ReturnType<typeof start> | undefined;
  const cfg = config({
    global_lifecycle_hooks: [act('on_startup', 'ok-start')],
    modes: {
      a: mode({
        agent_actions: [note],
        lifecycle_hooks: [
          act('on_entry', 'wait250', { priority: 3 }),
          act('on_entry', 'fail-entry', { priority: 2 }),
          act('on_entry', 'wait1000-async', { priority: 1, async_execution: true }),
          act('on_entry', 'fail-quiet', { priority: 0, on_failure: 'ignore' }),
        ],
      }),
    },
  });
  m = start(cfg, { dispatchAction: dispatcher(() => m!.clock) });
  await m.reach('a', 'entering');
  await m.flush();
  m.clock.increment(250);
  await m.active('a');
  await m.flush();
  const runs = () => m!.of('hook.run');
  t.same(
    runs().map((r) => [r.hook_type, r.ok, r.async]),
    [
      ['on_startup', true, false],
      ['on_entry', true, false],
      ['on_entry', false, false],
      ['on_entry', false, false],
    ],
    'startup, the slow hook, the failing one and the ignored failure; the async one is still running',
  );
  t.match(runs()[1], { mode: 'a', handler_type: 'action', duration_ms: 250 });
  t.match(runs()[2], { handler: 'action "note"', error: /fail-entry failed/ });
  t.equal(m.of('hook.failed').length, 1, 'hook.failed still reports the failure that is not ignored');

  m.clock.increment(1000);
  await m.flush();
  t.match(runs()[4], { hook_type: 'on_entry', ok: true, async: true, duration_ms: 1000, handler: 'action "note"' }, 'the async hook is reported when it ends');
  t.equal(runs().length, 5);
  m.actor.stop();
});

t.test('shutdown hooks are reported too: on_exit done, an on_shutdown hook that times out failed with the reason', async (t) => {
  let m: ReturnType<typeof start> | undefined;
  const cfg = config({
    global_lifecycle_hooks: [act('on_shutdown', 'hang-down', { timeout_seconds: 2 })],
    modes: { a: mode({ agent_actions: [note], lifecycle_hooks: [act('on_exit', 'ok-exit')] }) },
  });
  m = start(cfg, { dispatchAction: dispatcher(() => m!.clock) });
  await m.active('a');
  m.actor.send({ type: 'agent.shutdown' });
  await m.flush();
  m.clock.increment(2000);
  t.equal((await m.finished()).ok, true, 'stopped after shutdown');
  await m.flush();
  t.same(
    m.of('hook.run').map((r) => [r.hook_type, r.ok, r.error ?? null]),
    [
      ['on_exit', true, null],
      ['on_shutdown', false, 'timed out after 2 s'],
    ],
  );
});

t.test('lines logged by hooks carry the mode and the hook event', async (t) => {
  let m: ReturnType<typeof start> | undefined;
  const cfg = config({
    modes: {
      a: mode({ agent_actions: [note], lifecycle_hooks: [act('on_entry', 'fail-logged'), hook('on_entry', 'message', { message: 'hello {mode_name}' })] }),
    },
  });
  m = start(cfg, { dispatchAction: dispatcher(() => m!.clock) });
  await m.active('a');
  await m.flush();
  const failed = m.log.lines.find((l) => String(l.msg).includes('fail-logged failed'));
  t.match(failed, { mode: 'a', hook: 'on_entry', level: 40 });
  const said = m.log.lines.find((l) => l.msg === 'hello a');
  t.match(said, { mode: 'a', hook: 'on_entry' }, 'a message hook without a speak action logs with the mode');
  for (const line of m.log.lines) t.equal(typeof line.mode, 'string', `"${String(line.msg)}" names the mode`);
  m.actor.stop();
});
