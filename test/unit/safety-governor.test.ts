// Proves the governor's limits one by one on a simulated clock: allowed values, stop value, longest continuous motion and rest, health faults, geofence, stopping, a restored latch.
import t, { type Test } from 'tap';
import { pino } from 'pino';
import { SimulatedClock, createActor } from 'xstate';
import { createActionHandle } from '../../actors/actions/action.js';
import { governorLogic } from '../../actors/safety/governor.js';
import { GOVERNOR_NOT_RUNNING, GovernorView, initialStatus, statusOfSnapshot, type SafetyStatus } from '../../actors/safety/status.js';
import { SafetyConfig } from '../../src/config/safety.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { distanceM, outsideFence } from '../../src/safety/geofence.js';
import { resolvePolicy } from '../../src/safety/policy.js';
import { startGovernor, wireRig } from '../helpers/governor.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

const { wire, entry, plugins, settle } = await wireRig();

/** A governor on a simulated clock with one motion action in mode `m`; `go(value)` dispatches and settles. */
function rig(t: Test, safety: Record<string, unknown>, modeSafety: Record<string, unknown> = {}) {
  wire.length = 0;
  const clock = new SimulatedClock();
  const bus = new AgentBus();
  const events: AgentEvent[] = [];
  bus.events$.subscribe((e) => events.push(e));
  const governor = startGovernor(safety as never, { clock, bus, modes: { m: modeSafety } });
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
    return events.filter((e): e is Ev<'action'> => e.type === 'action').at(-1)!;
  };
  const safetyEvents = (kind: string) => events.filter((e): e is Ev<'safety'> => e.type === 'safety' && e.kind === kind);
  return { clock, bus, governor, handle, go, events, safetyEvents };
}

t.test('allowed values per mode, a mode without motion, and the stop value that always passes', async (t) => {
  const r = rig(t, {}, { allowed_values: ['turn left'] });
  t.equal((await r.go('turn left')).state, 'done');
  const refused = await r.go('dance');
  t.match(refused, { state: 'failed', error: /"dance" is not allowed in mode m \(allowed: "turn left"\)/ });
  t.match(r.safetyEvents('refused').at(-1), { cause: 'value', value: 'dance', label: 'move' });
  t.equal((await r.go('stand still')).state, 'done', 'the stop value is not limited');
  t.same(wire, ['MOVE turn left', 'MOVE stand still']);

  const b = rig(t, {}, { motion: false });
  t.match(await b.go('walk forward'), { state: 'failed', error: /mode m forbids motion/ });
  t.equal((await b.go('stand still')).state, 'done');
});

t.test('longest continuous motion stops the robot, then motion rests', async (t) => {
  const r = rig(t, { max_continuous_seconds: 10, rest_seconds: 5, deadman_seconds: 3, rate_limit: { commands: 100, per_seconds: 1 } });
  for (let s = 0; s < 10; s += 2) {
    t.equal((await r.go('walk forward')).state, 'done');
    r.clock.increment(2000);
    await settle();
  }
  t.match(r.safetyEvents('stop').at(-1), { cause: 'max_continuous', reason: /longest continuous motion \(10 s\) reached; resting 5 s/ });
  t.equal(wire.at(-1), 'STOP');
  t.equal(statusOfSnapshot(r.governor.actor.getSnapshot()).motion, 'resting');
  t.match(await r.go('walk forward'), { state: 'failed', error: /resting after the longest continuous motion/ });
  r.clock.increment(5000);
  await settle();
  t.equal((await r.go('walk forward')).state, 'done', 'accepted after the rest');
});

t.test('a failed model call, a reconnecting socket and a stalled model stop motion and pause it until they recover', async (t) => {
  const r = rig(t, { deadman_seconds: 60, model_stall_seconds: 4 });
  await r.go('walk forward');
  r.bus.emit({ type: 'model.error', at: 0, mode: 'm', tick: 1, error: 'connect ECONNREFUSED 127.0.0.1:1' });
  await settle();
  t.match(r.safetyEvents('stop').at(-1), { cause: 'service', reason: /model: the model call failed \(connect ECONNREFUSED/ });
  t.match(await r.go('walk forward'), { state: 'failed', error: /motion is paused while model: the model call failed/ });
  r.bus.emit({ type: 'model.answer', at: 0, mode: 'm', tick: 2, model: 'x', tool_calls: [], latency_ms: 1 });
  await settle();
  t.equal((await r.go('walk forward')).state, 'done', 'the model answered again');

  r.bus.emit({ type: 'stream', at: 0, kind: 'asr', input: 'SpeechlabASRInput', state: 'backingOff', reason: 'connection refused' });
  await settle();
  t.match(r.safetyEvents('stop').at(-1), { cause: 'service', reason: /asr socket SpeechlabASRInput: reconnecting \(connection refused\)/ });
  r.bus.emit({ type: 'stream', at: 0, kind: 'asr', input: 'SpeechlabASRInput', state: 'streaming' });
  await settle();
  t.equal((await r.go('walk forward')).state, 'done');
  // A device is not the hosted service: a serial port (a sensor board, the e-stop line) reopening does not pause motion.
  const stops = r.safetyEvents('stop').length;
  r.bus.emit({ type: 'stream', at: 0, kind: 'serial', input: 'GpsInput', state: 'backingOff', reason: 'serial: /dev/ttyACM0 closed (unplugged?)' });
  await settle();
  t.equal(r.safetyEvents('stop').length, stops, 'a serial outage is no service outage');
  t.equal((await r.go('walk forward')).state, 'done');

  r.bus.emit({ type: 'prompt', at: 0, mode: 'm', tick: 3, prompt: 'p' });
  r.clock.increment(3000);
  r.bus.emit({ type: 'model.progress', at: 0, mode: 'm', tick: 3, stage: 'first_token' }); // a streamed answer arrives: the call is alive
  r.clock.increment(3000);
  await settle();
  t.equal(r.safetyEvents('stop').filter((e) => e.cause === 'model_stall').length, 0, 'progress restarts the stall timer');
  r.clock.increment(1500);
  await settle();
  t.match(r.safetyEvents('stop').at(-1), { cause: 'model_stall', reason: /no answer for 4 s \(stalled\)/ });
});

const progress = (tick: number, stage: Ev<'model.progress'>['stage'] = 'sentence'): AgentEvent => ({ type: 'model.progress', at: 0, mode: 'm', tick, stage });

t.test(
  'a streamed answer after a failed call: its first token ends the pause, so the motion it streams is granted; a failing model and the e-stop stay',
  async (t) => {
    const r = rig(t, { deadman_seconds: 60, model_stall_seconds: 4, rate_limit: { commands: 100, per_seconds: 1 } });
    r.bus.emit({ type: 'prompt', at: 0, mode: 'm', tick: 1, prompt: 'p' });
    r.bus.emit({ type: 'model.error', at: 0, mode: 'm', tick: 1, error: 'POST /chat/completions: 503' });
    await settle();
    t.match(await r.go('walk forward'), { state: 'failed', error: /motion is paused while model: the model call failed/ });
    // The next tick: the answer streams, its move is complete (and dispatched) before `model.answer` is on the bus.
    r.bus.emit({ type: 'prompt', at: 0, mode: 'm', tick: 2, prompt: 'p' });
    r.bus.emit(progress(2, 'first_token'));
    r.bus.emit(progress(2, 'tool_call'));
    t.equal((await r.go('walk forward')).state, 'done', 'the model answers again: the move it streamed is granted');
    r.bus.emit({ type: 'model.answer', at: 0, mode: 'm', tick: 2, model: 'x', tool_calls: [], latency_ms: 1 });
    await settle();
    t.same(wire, ['MOVE walk forward']);

    // A model that keeps failing stays stopped until it is healthy, streamed progress or not.
    r.bus.emit({ type: 'model', at: 0, mode: 'm', model: 'x', state: 'failing', reason: '503', failures: 3 });
    r.bus.emit({ type: 'prompt', at: 0, mode: 'm', tick: 3, prompt: 'p' });
    r.bus.emit(progress(3, 'first_token'));
    await settle();
    t.match(await r.go('walk forward'), { state: 'failed', error: /motion is paused while model health: x keeps failing/ });
    r.bus.emit({ type: 'model', at: 0, mode: 'm', model: 'x', state: 'healthy' });
    r.bus.emit(progress(3, 'tool_call'));
    t.equal((await r.go('walk forward')).state, 'done', 'healthy again');

    // The e-stop is never released by the model.
    r.governor.actor.send({ type: 'safety.estop', reason: 'button', source: 'serial' });
    r.bus.emit({ type: 'prompt', at: 0, mode: 'm', tick: 4, prompt: 'p' });
    r.bus.emit(progress(4, 'first_token'));
    r.bus.emit(progress(4, 'tool_call'));
    t.match(await r.go('walk forward'), { state: 'failed', error: /emergency stop latched \(serial: button\)/ });
    t.equal(statusOfSnapshot(r.governor.actor.getSnapshot()).estop?.source, 'serial');
  },
);

t.test('an answer that streams longer than model_stall_seconds keeps motion allowed while it progresses; one that stops progressing stalls', async (t) => {
  const r = rig(t, { deadman_seconds: 60, model_stall_seconds: 4, rate_limit: { commands: 100, per_seconds: 1 } });
  r.bus.emit({ type: 'prompt', at: 0, mode: 'm', tick: 1, prompt: 'p' });
  r.bus.emit(progress(1, 'first_token'));
  await settle();
  // 15 s of answer, a sentence or a tool call every 3 s: never 4 s without progress.
  for (let s = 0; s < 15; s += 3) {
    r.clock.increment(3000);
    r.bus.emit(progress(1, s % 2 ? 'tool_call' : 'sentence'));
    await settle();
    t.equal((await r.go('walk forward')).state, 'done', `motion allowed ${s + 3} s into the answer`);
  }
  t.equal(r.safetyEvents('stop').length, 0, 'no stop while the answer progresses');
  r.bus.emit({ type: 'model.answer', at: 0, mode: 'm', tick: 1, model: 'x', tool_calls: [], latency_ms: 15_000 });
  await settle();

  // The next answer starts, then nothing more comes: stalled 4 s after its last progress.
  r.bus.emit({ type: 'prompt', at: 0, mode: 'm', tick: 2, prompt: 'p' });
  r.clock.increment(2000);
  r.bus.emit(progress(2, 'first_token'));
  r.clock.increment(3000);
  await settle();
  t.equal(r.safetyEvents('stop').length, 0, 'counted from the last progress, not from the prompt');
  r.clock.increment(1500);
  await settle();
  t.match(r.safetyEvents('stop').at(-1), { cause: 'model_stall', reason: /model: no answer for 4 s \(stalled\)/ });
  t.equal(wire.at(-1), 'STOP');
  t.match(await r.go('walk forward'), { state: 'failed', error: /motion is paused while model: no answer for 4 s/ });
  // It goes on writing: alive again, and motion with it.
  r.bus.emit(progress(2, 'tool_call'));
  t.equal((await r.go('walk forward')).state, 'done', 'progress after a stall ends the pause');
});

t.test('the geofence: motion stops when the robot leaves it, only the return value is accepted outside, no fix counts as outside', async (t) => {
  const fence = { center: { latitude: 48.0, longitude: 11.0 }, radius_m: 50 };
  const r = rig(t, { geofence: fence, return_value: 'walk back', deadman_seconds: 60, rate_limit: { commands: 100, per_seconds: 1 } });
  t.match(await r.go('walk forward'), { state: 'failed', error: /there is no GPS fix to check the geofence; only "walk back" is accepted/ });
  r.governor.actor.send({ type: 'safety.context', values: { gps_fix: true, latitude: 48.0, longitude: 11.0 } });
  t.equal((await r.go('walk forward')).state, 'done');
  r.governor.actor.send({ type: 'safety.context', values: { gps_fix: true, latitude: 48.001, longitude: 11.0 } }); // ~111 m north
  await settle();
  t.match(r.safetyEvents('stop').at(-1), { cause: 'geofence', reason: 'the robot left the geofence' });
  t.match(await r.go('turn left'), { state: 'failed', error: /outside the geofence/ });
  t.equal((await r.go('walk back')).state, 'done', 'the return value is accepted outside');

  t.ok(distanceM({ lat: 48, lon: 11 }, { lat: 48.001, lon: 11 }) > 100);
  const square = {
    kind: 'polygon' as const,
    corners: [
      { lat: 0, lon: 0 },
      { lat: 0, lon: 1 },
      { lat: 1, lon: 1 },
      { lat: 1, lon: 0 },
    ],
  };
  t.notOk(outsideFence(square, { fix: true, lat: 0.5, lon: 0.5 }));
  t.ok(outsideFence(square, { fix: true, lat: 1.5, lon: 0.5 }));
  t.ok(outsideFence(square, { fix: false, lat: 0.5, lon: 0.5 }));
});

t.test('a mode block overrides the global one; geofence null removes the global fence; unknown fields are errors', async (t) => {
  const safety = SafetyConfig.parse({ deadman_seconds: 2, geofence: { center: { latitude: 1, longitude: 2 }, radius_m: 10 } });
  const p = resolvePolicy({ safety, modes: { a: { safety: { deadman_seconds: 0.5 } }, b: { safety: { geofence: null } } } } as never);
  t.equal(p.modes.a!.deadmanMs, 500);
  t.equal(p.modes.b!.deadmanMs, 2000);
  t.ok(p.modes.a!.fence);
  t.equal(p.modes.b!.fence, null);
  t.equal(p.global.rate.commands, 4, 'built-in default');
  t.match(SafetyConfig.safeParse({ deadman_second: 2 }).error?.issues[0], { code: 'unrecognized_keys' });
});

t.test('when the agent stops, motion stops and only the stop value passes; a latch restored at start halts every motion action that registers', async (t) => {
  const r = rig(t, { deadman_seconds: 60 });
  await r.go('walk forward');
  r.governor.actor.send({ type: 'safety.stopping', reason: 'SIGTERM' });
  await settle();
  t.match(r.safetyEvents('stop').at(-1), { cause: 'stopping', reason: 'the agent is stopping (SIGTERM)' });
  t.match(await r.go('walk forward'), { state: 'failed', error: /the agent is stopping \(SIGTERM\)/ });
  t.equal((await r.go('stand still')).state, 'done');

  wire.length = 0;
  const bus = new AgentBus();
  const events: AgentEvent[] = [];
  bus.events$.subscribe((e) => events.push(e));
  const policy = resolvePolicy({ modes: { m: {} }, safety: SafetyConfig.parse({ estop_socket: { enabled: false } }) } as never);
  const restored = createActor(governorLogic(), {
    input: { policy, bus, logger: pino({ level: 'silent' }), now: Date.now, mode: 'm', latch: { source: 'socket', reason: 'before the crash', at: 1 } },
  });
  restored.start();
  t.teardown(() => restored.stop());
  t.match(events[0], { type: 'safety', kind: 'estop', restored: true, source: 'socket' });
  const handle = createActionHandle(
    entry,
    { logger: pino({ level: 'silent' }), bus, mode: 'm', stateDir: '/nonexistent', write: () => {}, plugins },
    { safety: restored },
  );
  t.teardown(() => handle.stop());
  await settle();
  t.same(wire, ['STOP'], 'the stop command goes out as soon as the motion action starts');
});

t.test('without a governor every motion command is refused', async (t) => {
  const bus = new AgentBus();
  const failed = new Promise<Ev<'action'>>((resolve) => bus.events$.subscribe((e) => e.type === 'action' && e.state === 'failed' && resolve(e)));
  const handle = createActionHandle(entry, { logger: pino({ level: 'silent' }), bus, mode: 'm', stateDir: '/nonexistent', write: () => {}, plugins });
  t.teardown(() => handle.stop());
  handle.dispatch({ action: 'sit' }, 'hook');
  t.match(await failed, { error: /no safety governor is running, so motion is refused/ });
});

t.test("the governor's status reaches subscribers as it changes, and a release is answered by the governor's event", async (t) => {
  const r = rig(t, { deadman_seconds: 3 });
  const seen: SafetyStatus[] = [];
  const feed = new GovernorView(r.governor.actor, initialStatus(null), (s) => seen.push(s));
  t.teardown(() => feed.close());
  t.same(feed.status, { estop: null, motion: 'still', stopping: false, faults: [] }, 'the status it started with');
  t.same(await feed.release('test'), { ok: false, reason: 'no emergency stop is latched' }, 'nothing latched: refused, with why');
  await r.go('walk forward');
  t.equal(feed.status.motion, 'moving', 'a granted motion is seen as it starts');
  r.governor.actor.send({ type: 'safety.estop', reason: 'person in the way', source: 'test' });
  t.match(feed.status, { estop: { source: 'test', reason: 'person in the way' }, motion: 'still' }, 'the latch (and the stop it sent) are seen at once');
  const changes = seen.length;
  r.governor.actor.send({ type: 'safety.context', values: {} });
  t.equal(seen.length, changes, 'an event that changes nothing of the status is not told again');
  t.same(await feed.release('test'), { ok: true }, 'latched: released');
  t.equal(feed.status.estop, null);
  r.governor.stop();
  t.same(feed.status, GOVERNOR_NOT_RUNNING, 'a stopped governor: not running, which refuses motion');
  t.same(await feed.release('test'), { ok: false, reason: 'the safety governor is not running' }, 'a stopped governor cannot release');
});

t.test('a motion action whose governor stopped refuses motion at once (it does not wait for an answer)', async (t) => {
  const bus = new AgentBus();
  const governor = startGovernor({} as never, { clock: new SimulatedClock(), bus, modes: { m: {} } });
  const handle = createActionHandle(
    entry,
    { logger: pino({ level: 'silent' }), bus, mode: 'm', stateDir: '/nonexistent', write: () => {}, plugins },
    { safety: governor.actor },
  );
  t.teardown(() => handle.stop());
  governor.stop();
  const failed = new Promise<Ev<'action'>>((resolve) => bus.events$.subscribe((e) => e.type === 'action' && e.state === 'failed' && resolve(e)));
  handle.dispatch({ action: 'sit' }, 'model');
  t.match(await failed, { error: /no safety governor is running, so motion is refused/ });
});
