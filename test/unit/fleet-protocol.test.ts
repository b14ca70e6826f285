// Proves the fleet's pure parts: command admission (stale, too long, replayed, remembered across restarts), the state fold, what reaches the events topic, topics and templates.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandGuard } from '../../src/fleet/guard.js';
import { StateReducer } from '../../src/fleet/state.js';
import { EventBudget, operatorEvent } from '../../src/fleet/events.js';
import { executeCommand, type FleetControl } from '../../src/fleet/execute.js';
import { FleetCommand, makeCommand, parsePayload, parseTopic, topicOf } from '../../src/fleet/protocol.js';
import { healthSummary } from '../../src/fleet/operator.js';
import { renderTemplate } from '../../actors/inputs/mqtt-input.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { tempDir } from '../helpers/config-fixtures.js';

t.test('a command is admitted once, before its expiry, and only with a bounded life', async (t) => {
  const g = new CommandGuard({ maxTtlMs: 60_000 });
  const now = 1_000_000;
  t.same(g.admit({ id: 'cmd-00001', expires_at: now + 10_000 }, now), { ok: true });
  t.match(g.admit({ id: 'cmd-00001', expires_at: now + 10_000 }, now + 1), { ok: false, reason: /^replayed: command cmd-00001 was received before/ });
  t.match(g.admit({ id: 'cmd-00002', expires_at: now - 2500 }, now), { ok: false, reason: /^stale: it expired 3 s ago/ });
  t.match(g.admit({ id: 'cmd-00003', expires_at: now + 61_000 }, now), { ok: false, reason: /expires too far ahead: a command may live at most 60 s/ });
  t.equal(g.size, 1, 'refused commands are not remembered');
  // A full memory forgets expired ids first, and refuses only while every remembered command still lives.
  const small = new CommandGuard({ maxTtlMs: 60_000, maxEntries: 2 });
  small.admit({ id: 'a-000001', expires_at: now + 100 }, now);
  small.admit({ id: 'a-000002', expires_at: now + 50_000 }, now);
  t.match(small.admit({ id: 'a-000003', expires_at: now + 50_000 }, now + 10), { ok: false, reason: /too many live commands/ });
  t.same(small.admit({ id: 'a-000003', expires_at: now + 50_000 }, now + 200), { ok: true }, 'after the first expired');
});

t.test('ids seen survive a restart through the state file; a corrupt file is reported and replaced', async (t) => {
  const file = join(tempDir(t), 'fleet', 'r1.commands.json');
  const exp = Date.now() + 30_000;
  const first = new CommandGuard({ maxTtlMs: 60_000, file });
  first.admit({ id: 'persisted-1', expires_at: exp });
  t.notOk(existsSync(file), 'nothing is written on the command path');
  // A burst of ids goes out in one write, off the command's path; close() writes what is left.
  for (let i = 0; i < 50; i++) first.admit({ id: `burst-${String(i).padStart(3, '0')}`, expires_at: exp });
  await first.flush();
  t.equal(first.writes, 1, 'one write for the burst');
  first.admit({ id: 'persisted-2', expires_at: exp });
  await first.close();
  t.equal(first.writes, 2);
  t.match(JSON.parse(readFileSync(file, 'utf8')), { version: 1, seen: { 'persisted-1': exp, 'burst-049': exp, 'persisted-2': exp } });
  const again = new CommandGuard({ maxTtlMs: 60_000, file });
  t.match(again.admit({ id: 'persisted-1', expires_at: exp }), { ok: false, reason: /^replayed/ }, 'a replay after a restart is refused');
  t.match(again.admit({ id: 'persisted-2', expires_at: exp }), { ok: false, reason: /^replayed/ }, 'the last one too (written at close)');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, 'garbage');
  const warnings: string[] = [];
  const fresh = new CommandGuard({ maxTtlMs: 60_000, file, onWarning: (m) => warnings.push(m) });
  t.equal(fresh.size, 0);
  t.match(warnings[0], /is not a command record/);
});

t.test('command payloads: the schema names the field at fault', async (t) => {
  const cmd = makeCommand({ command: 'switch', mode: 'idle' }, 5000, 1000);
  t.match(cmd, { command: 'switch', mode: 'idle', expires_at: 6000 });
  t.match(cmd.id, /^[0-9a-f-]{36}$/);
  t.same(parsePayload(FleetCommand, JSON.stringify(cmd)), { ok: true, value: cmd });
  t.same(parsePayload(FleetCommand, 'nope'), { ok: false, reason: 'not JSON' });
  t.match(parsePayload(FleetCommand, JSON.stringify({ ...cmd, command: 'fly' })), { ok: false, reason: /command/ });
  t.match(parsePayload(FleetCommand, JSON.stringify({ id: 'abcdefgh', command: 'say', expires_at: 5 })), { ok: false, reason: /^text: / });
  t.equal(topicOf('lab/robots', 'r1', 'state'), 'lab/robots/r1/state');
  t.same(parseTopic('lab/robots', 'lab/robots/r1/replies'), { robot: 'r1', kind: 'replies' });
  t.equal(parseTopic('lab/robots', 'lab/robots/r1/other'), undefined);
  t.equal(parseTopic('cortexd', 'cortexd/r1/state/x'), undefined);
});

const seed = {
  robot: 'r1',
  config: 'spot',
  version: '0.1.0',
  mode: 'idle',
  modes: { idle: { inputs: ['TextInput', 'SpeechlabASRInput'], actions: ['speak'] }, sleep: { inputs: [], actions: [] } },
  estopEngaged: false,
  now: 100,
};

t.test('the state follows the bus: mode, health of inputs, actions, streams and tool servers, battery and position', async (t) => {
  const s = new StateReducer(seed);
  t.match(s.current, {
    mode: 'idle',
    mode_since: 100,
    modes: ['idle', 'sleep'],
    health: { ok: true, inputs: { TextInput: { state: 'ok' } }, actions: { speak: { state: 'ok' } } },
    estop: { available: true, engaged: false },
  });
  const at = (n: number) => n;
  const apply = (e: AgentEvent) => s.apply(e);
  t.ok(apply({ type: 'stream', at: at(200), kind: 'asr', input: 'SpeechlabASRInput', state: 'backingOff', reason: 'server closed 1006' }));
  t.match(s.current.health, { ok: false, streams: { 'asr/SpeechlabASRInput': { state: 'backingOff', detail: 'server closed 1006', since: 200 } } });
  t.equal(s.current.updated_at, 200);
  t.ok(apply({ type: 'stream', at: at(300), kind: 'asr', input: 'SpeechlabASRInput', state: 'streaming' }));
  t.equal(s.current.health.ok, true);
  t.notOk(
    apply({ type: 'tick', at: at(310), mode: 'idle', n: 1, late_skipped: 0, lateness_ms: 0, called_model: false }),
    'a tick changes nothing a reader sees',
  );
  t.ok(
    apply({ type: 'action', at: at(400), mode: 'idle', label: 'speak', name: 'speak', connector: 'local_tts', state: 'failed', error: 'espeak-ng: not found' }),
  );
  t.match(healthSummary(s.current), /action speak failed/);
  t.ok(apply({ type: 'action', at: at(410), mode: 'idle', label: 'speak', name: 'speak', connector: 'local_tts', state: 'done' }));
  t.ok(apply({ type: 'error', at: at(500), source: 'input.TextInput', message: 'input TextInput failed: EADDRINUSE; restarting in 1000 ms' }));
  t.equal(s.current.health.inputs.TextInput?.state, 'restarting');
  t.ok(apply({ type: 'error', at: at(510), source: 'input.TextInput', message: 'input TextInput stopped: 401 Invalid API key' }));
  t.equal(s.current.health.inputs.TextInput?.state, 'failed');
  t.ok(apply({ type: 'input', at: at(520), mode: 'idle', input: 'TextInput', text: 'hi', final: true }));
  t.equal(s.current.health.inputs.TextInput?.state, 'ok', 'a message means it works again');
  t.ok(
    apply({
      type: 'context',
      at: at(600),
      source: 'input.BatteryInput',
      values: { battery_percent: 42, battery_status: 'Discharging', battery_charging: false, battery_low: false },
    }),
  );
  t.same(s.current.battery, { percent: 42, status: 'Discharging', charging: false, low: false });
  t.ok(apply({ type: 'context', at: at(610), source: 'input.GpsInput', values: { gps_fix: true, latitude: 48.1, longitude: 11.5, altitude_m: 520 } }));
  t.same(s.current.position, { lat: 48.1, lon: 11.5, altitude_m: 520 });
  t.ok(apply({ type: 'mode.changed', at: at(700), from: 'idle', to: 'sleep', trigger: 'manual', reason: 'r' }));
  t.match(s.current, { mode: 'sleep', mode_since: 700, health: { ok: true, inputs: {}, actions: {}, streams: {} } });
  t.same(s.current.battery, { percent: 42, status: 'Discharging', charging: false, low: false }, 'battery and position outlive a mode');
});

t.test('the events topic: what operators care about, transcripts only when shared, secrets never', async (t) => {
  const answer: AgentEvent = {
    type: 'model.answer',
    at: 1,
    mode: 'idle',
    tick: 1,
    model: 'CloudLLM',
    text: 'I heard you say your PIN',
    tool_calls: [{ name: 'speak', arguments: { sentence: 'private' } }],
    latency_ms: 12,
  };
  t.same(operatorEvent(answer, false), {
    type: 'model.answer',
    at: 1,
    mode: 'idle',
    tick: 1,
    model: 'CloudLLM',
    tool_calls: [{ name: 'speak' }],
    latency_ms: 12,
  });
  t.same(operatorEvent(answer, true), answer);
  const heard: AgentEvent = { type: 'input', at: 1, mode: 'idle', input: 'TextInput', text: 'my secret plans', final: true };
  t.equal(operatorEvent(heard, false), undefined);
  t.same(operatorEvent(heard, true), heard);
  t.equal(operatorEvent({ type: 'prompt', at: 1, mode: 'idle', tick: 1, prompt: 'p' }, false), undefined);
  t.equal(operatorEvent({ type: 'tick', at: 1, mode: 'idle', n: 1, late_skipped: 0, lateness_ms: 0, called_model: true }, true), undefined);
  t.equal(operatorEvent({ type: 'action', at: 1, mode: 'm', label: 'speak', name: 'speak', connector: 'c', state: 'done' }, true), undefined);
  t.ok(operatorEvent({ type: 'action', at: 1, mode: 'm', label: 'speak', name: 'speak', connector: 'c', state: 'failed', error: 'x' }, false));
  const err = operatorEvent(
    { type: 'error', at: 1, source: 'mcp', message: 'connect https://bob:hunter2@tools.lan failed with Bearer abcdefghijklmnop' },
    false,
  );
  t.notMatch(JSON.stringify(err), /hunter2|abcdefghijklmnop/);
  const budget = new EventBudget(2, 3, 0);
  t.same(
    [0, 0, 0, 0].map(() => budget.take(0)),
    [true, true, true, false],
    'a burst of 3, then nothing',
  );
  t.equal(budget.dropped, 1);
  t.ok(budget.take(500), 'refilled at 2 per second');
});

t.test('commands through the control surface: estop latches with source fleet, release answers with the governor', async (t) => {
  const calls: string[] = [];
  let latched = false;
  const base: FleetControl = {
    configName: 'spot',
    config: { modes: {} } as unknown as FleetControl['config'],
    currentMode: () => 'idle',
    switchMode: async (mode) => (mode === 'idle' ? { ok: false, reason: 'already in mode idle' } : { ok: true }),
    pushText: () => false,
    estop: (reason, source) => {
      calls.push(`estop ${source}: ${reason}`);
      latched = true;
    },
    release: async (source) => {
      calls.push(`release ${source}`);
      if (!latched) return { ok: false, reason: 'no emergency stop is latched' };
      latched = false;
      return { ok: true };
    },
    safetyStatus: () => ({ estop: null, motion: 'still', stopping: false, faults: [] }),
  };
  const cmd = (body: Parameters<typeof makeCommand>[0]) => makeCommand(body, 1000);
  t.same(await executeCommand(cmd({ command: 'release' }), { control: base }), { ok: false, reason: 'no emergency stop is latched' });
  t.same(await executeCommand(cmd({ command: 'estop', reason: 'test' }), { control: base }), { ok: true });
  t.same(await executeCommand(cmd({ command: 'release' }), { control: base }), { ok: true });
  t.same(calls, ['release fleet', 'estop fleet: test', 'release fleet']);
  const e = cmd({ command: 'estop' });
  await executeCommand(e, { control: base });
  t.equal(calls.at(-1), `estop fleet: fleet command ${e.id}`, 'without a reason the command names itself');
  t.same(await executeCommand(cmd({ command: 'switch', mode: 'idle' }), { control: base }), { ok: false, reason: 'already in mode idle' });
  t.same(await executeCommand(cmd({ command: 'say', text: 'hi' }), { control: base }), { ok: false, reason: 'mode idle has no input that takes typed text' });
  t.same(await executeCommand(cmd({ command: 'context', values: { a: 1 } }), { control: base }), {
    ok: false,
    reason: 'context values cannot be set on this agent',
  });
  t.match(await executeCommand(cmd({ command: 'reload', config: '{}' }), { control: base }), {
    ok: false,
    reason: /only available to an agent run by `cortexd run`/,
  });
  const throwing: FleetControl = {
    ...base,
    estop: () => {
      throw new Error('governor not running');
    },
  };
  t.same(await executeCommand(cmd({ command: 'estop' }), { control: throwing }), { ok: false, reason: 'governor not running' });
});

t.test('the e-stop on the fleet state follows the safety governor, whoever pressed it', async (t) => {
  const s = new StateReducer(seed);
  t.ok(s.apply({ type: 'safety', at: 300, kind: 'estop', source: 'websim', reason: 'button' }));
  t.same(s.current.estop, { available: true, engaged: true });
  t.notOk(s.apply({ type: 'safety', at: 310, kind: 'stop', cause: 'estop', reason: 'latched' }), 'a stop changes nothing on the state');
  t.ok(s.apply({ type: 'safety', at: 320, kind: 'release', source: 'socket', reason: 'released' }));
  t.same(s.current.estop, { available: true, engaged: false });
  t.same(new StateReducer({ ...seed, estopEngaged: true }).current.estop, { available: true, engaged: true }, 'a latch restored at start');
});

t.test('MqttInput templates: topic, payload, JSON fields', async (t) => {
  t.equal(renderTemplate('{topic}: {payload}', 'sensors/t1', '21.5'), 'sensors/t1: 21.5');
  t.equal(renderTemplate('{payload.name} is {payload.temp.c} C ({topic})', 'x', '{"name":"lab","temp":{"c":21.5}}'), 'lab is 21.5 C (x)');
  t.equal(renderTemplate('{payload}', 'x', '{ "a" : 1 }'), '{"a":1}', 'JSON compacted');
  t.equal(renderTemplate('[{payload.missing}] {other}', 'x', 'not json'), '[] {other}');
});
