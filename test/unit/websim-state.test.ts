// The WebSim state reducer: mode and last transition, action life cycles, face from face actions, counters, bounded logs, transcript, timeline, socket details.
import t from 'tap';
import { BODY_PATH, initialState, MAX_ACTIONS, reduce, type SimEvent, type SimState } from '../../src/websim/page/state.js';

const run = (events: Array<Partial<SimEvent> & { type: string }>, s: SimState = initialState('idle')) =>
  events.reduce<SimState>((acc, e, i) => reduce(acc, { at: 1000 + i, ...e } as SimEvent), s);

t.test('mode.changed sets the mode and the last transition with its reason and rule', async (t) => {
  const s = run([{ type: 'mode.changed', from: 'idle', to: 'conversation', trigger: 'input', reason: 'keyword "hello"', rule_index: 0 }]);
  t.equal(s.mode, 'conversation');
  t.same(s.lastTransition, { at: 1000, from: 'idle', to: 'conversation', trigger: 'input', reason: 'keyword "hello"', rule_index: 0 });
  const refused = run([{ type: 'mode.refused', requested: 'sleep', reason: 'switch in progress' }], s);
  t.equal(refused.mode, 'conversation');
  t.match(refused.lastRefusal, { requested: 'sleep', reason: 'switch in progress' });
});

t.test('an action moves queued -> running -> done in one entry; a second command is a new entry', async (t) => {
  const base = { type: 'action', mode: 'idle', label: 'speak', name: 'speak', connector: 'console' };
  const s = run([
    { ...base, state: 'queued', value: { sentence: 'one' } },
    { ...base, state: 'running' },
    { ...base, state: 'done' },
    { ...base, state: 'queued', value: { sentence: 'two' } },
  ]);
  t.equal(s.actions.length, 2);
  t.match(s.actions[0], { state: 'queued', value: { sentence: 'two' } });
  t.match(s.actions[1], { state: 'done', value: { sentence: 'one' } }, 'the value from queued is kept');
  const failed = run([{ ...base, state: 'failed', error: 'speaker gone' }], s);
  t.match(failed.actions[0], { state: 'failed', error: 'speaker gone', value: { sentence: 'two' } });
  t.equal(failed.actions.length, 2);
});

t.test('the action log keeps the newest entries only', async (t) => {
  const events = Array.from({ length: MAX_ACTIONS + 5 }, (_, i) => ({
    type: 'action',
    mode: 'm',
    label: `a${i}`,
    name: 'move',
    connector: 'c',
    state: 'queued',
  }));
  const s = run(events);
  t.equal(s.actions.length, MAX_ACTIONS);
  t.equal(s.actions[0]!.label, `a${MAX_ACTIONS + 4}`);
});

t.test('the face follows face actions that run, by name whatever the label; other actions leave it', async (t) => {
  const face = { type: 'action', mode: 'idle', label: 'emotion', name: 'face', connector: 'websim' };
  let s = run([{ ...face, state: 'queued', value: { emotion: 'joy' } }]);
  t.equal(s.face, null, 'queued is not shown yet');
  s = run([{ ...face, state: 'running' }], s);
  t.match(s.face, { emotion: 'joy' });
  s = run([{ type: 'action', mode: 'idle', label: 'emotion2', name: 'speak', connector: 'console', state: 'running', value: { emotion: 'sad' } }], s);
  t.match(s.face, { emotion: 'joy' });
  s = run([{ ...face, state: 'running', value: 'surprised' }], s);
  t.match(s.face, { emotion: 'surprised' }, 'a bare string value works too');
});

t.test('counters: ticks, skipped late ticks, model calls and errors, CU spent', async (t) => {
  const s = run([
    { type: 'tick', mode: 'idle', n: 1, late_skipped: 0, lateness_ms: 0, called_model: true },
    { type: 'tick', mode: 'idle', n: 4, late_skipped: 2, lateness_ms: 900, called_model: false },
    { type: 'model.answer', mode: 'idle', tick: 1, model: 'm', tool_calls: [], latency_ms: 120, cost_cu: 0.25 },
    { type: 'model.answer', mode: 'idle', tick: 4, model: 'm', text: 'ok', tool_calls: [{ name: 'speak', arguments: { sentence: 'hi' } }], latency_ms: 80 },
    { type: 'model.error', mode: 'idle', tick: 5, error: 'HTTP 500' },
  ]);
  t.same(s.counters, { ticks: 2, late_ticks: 2, model_calls: 3, model_errors: 1, cu_spent: 0.25, cu_speech: 0, cu_recognition: 0 });
  t.same(
    s.calls.map((c) => [c.tick, c.ok, c.latency_ms, c.summary]),
    [
      [5, false, 0, 'HTTP 500'],
      [4, true, 80, 'speak "ok"'],
      [1, true, 120, 'nothing to do'],
    ],
    'the timeline keeps every call, newest first',
  );
  t.match(s.answer, { text: 'ok', latency_ms: 80, tool_calls: [{ name: 'speak' }] });
  t.match(s.modelError, { error: 'HTTP 500' });
});

t.test('inputs keep their latest text; streams and MCP servers their latest state; hooks are logged', async (t) => {
  const s = run([
    { type: 'input', mode: 'idle', input: 'TextInput', text: 'hello', final: true },
    { type: 'input', mode: 'idle', input: 'TextInput', text: 'again', final: true },
    { type: 'input', mode: 'idle', input: 'Voice', text: 'partial', final: false },
    { type: 'stream', kind: 'asr', input: 'Voice', state: 'connecting' },
    { type: 'stream', kind: 'asr', input: 'Voice', state: 'streaming' },
    { type: 'mcp', server: 'tools', state: 'failed', detail: 'spawn ENOENT' },
    { type: 'hook', mode: 'idle', hook_type: 'on_entry', handler_type: 'message', ok: true, duration_ms: 3 },
    { type: 'prompt', mode: 'idle', tick: 2, prompt: 'You are Pip' },
    { type: 'error', source: 'simulator.WebSim', message: 'boom' },
    { type: 'agent.stopping', reason: 'SIGTERM' },
    { type: 'something.new' },
  ]);
  t.same(Object.keys(s.inputs), ['TextInput', 'Voice']);
  t.equal(s.inputs.TextInput!.text, 'again');
  t.equal(s.streams['asr:Voice']!.state, 'streaming');
  t.match(s.mcp.tools, { state: 'failed', detail: 'spawn ENOENT' });
  t.match(s.hooks, [{ hook_type: 'on_entry', ok: true, duration_ms: 3 }]);
  t.match(s.prompt, { text: 'You are Pip', tick: 2 });
  t.match(s.errors, [{ source: 'simulator.WebSim', message: 'boom' }]);
  t.equal(s.status, 'stopping');
});

t.test('the transcript holds finals heard and sentences said, in order; partials and other inputs are not in it', async (t) => {
  const speak = { type: 'action', mode: 'conversation', label: 'speak', name: 'speak', connector: 'local_tts' };
  const s = run([
    { type: 'input', mode: 'conversation', input: 'SpeechlabASRInput', text: 'turn', final: false },
    { type: 'input', mode: 'conversation', input: 'SpeechlabASRInput', text: 'turn left', final: true },
    { type: 'input', mode: 'conversation', input: 'LocalVLMInput', text: 'I see no faces.', final: false },
    { ...speak, state: 'queued', value: { sentence: 'Okay, turn left.' } },
    { ...speak, state: 'running' },
    { ...speak, state: 'done', cost_cu: 2 },
  ]);
  t.same(
    s.transcript.map((l) => [l.who, l.source, l.text]),
    [
      ['heard', 'SpeechlabASRInput', 'turn left'],
      ['said', 'conversation', 'Okay, turn left.'],
    ],
  );
  t.match(s.actions[0], { queued_at: 1003, started_at: 1004, ended_at: 1005, state: 'done' }, 'the action knows when it ran, for the timeline');
  t.equal(s.counters.cu_speech, 2);
});

t.test('a stream entry keeps its counters, the reason and a history of state changes; recognition CU adds up across restarts', async (t) => {
  const base = { type: 'stream', kind: 'asr', input: 'SpeechlabASRInput' };
  let s = run([
    { ...base, state: 'connecting', attempt: 1 },
    { ...base, state: 'streaming', attempt: 1, connections: 1, sent_bytes: 3200, cost_cu: 1 },
    { ...base, state: 'streaming', sent_bytes: 64000, cost_cu: 3 },
    { ...base, state: 'connecting', attempt: 1, reason: 'socket closed (1006)' },
    { ...base, state: 'backingOff', attempt: 2, delay_ms: 1000, breaker: true, reason: 'connection refused' },
  ]);
  const st = s.streams['asr:SpeechlabASRInput']!;
  t.match(st, { state: 'backingOff', attempt: 2, delay_ms: 1000, breaker: true, reason: 'connection refused', connections: 1, sent_bytes: 64000, cost_cu: 3 });
  t.same(
    st.history.map((h) => h.state),
    ['backingOff', 'connecting', 'streaming', 'connecting'],
    'counter updates are not state changes',
  );
  t.equal(s.counters.cu_recognition, 3);
  s = run([{ ...base, state: 'streaming', cost_cu: 0.5 }], s);
  t.equal(s.streams['asr:SpeechlabASRInput']!.delay_ms, undefined, 'the wait belongs to backingOff only');
  t.equal(s.counters.cu_recognition, 3.5, 'a restarted stream counts from zero again');
});

t.test('a hook cut short by a mode switch is cancelled, not failed', async (t) => {
  const s = run([
    {
      type: 'hook',
      mode: 'conversation',
      hook_type: 'on_entry',
      handler_type: 'message "hi"',
      ok: false,
      error: 'cancelled: its mode was left',
      cancelled: true,
    },
  ]);
  t.match(s.hooks[0], { ok: false, cancelled: true });
});

t.test('the last voice turn: stages in the order they came, with the outcome; context values with who set them', async (t) => {
  const s = run([
    {
      type: 'turn',
      mode: 'conversation',
      tick: 4,
      model: 'gen-4o-mini',
      streamed: true,
      origin: 'speech_end',
      origin_at: 900,
      stages_ms: { speech_end: 0, playback_start: 1396, final_transcript: 804, first_token: 1127, request_sent: 810 },
      sentences: 3,
      spoken: 3,
      gaps_ms: [0, 0],
      outcome: 'spoken',
    },
    { type: 'context', source: 'websim', values: { visitor: true, visitors: 2 } },
    { type: 'context', source: 'input.BatteryInput', values: { battery_percent: 15 } },
  ]);
  t.same(s.turn?.stages, [
    ['speech_end', 0],
    ['final_transcript', 804],
    ['request_sent', 810],
    ['first_token', 1127],
    ['playback_start', 1396],
  ]);
  t.match(s.turn, { outcome: 'spoken', streamed: true, spoken: 3, sentences: 3, origin: 'speech_end', mode: 'conversation' });
  t.same(s.context, {
    visitor: { at: 1001, value: true, source: 'websim' },
    visitors: { at: 1001, value: 2, source: 'websim' },
    battery_percent: { at: 1002, value: 15, source: 'input.BatteryInput' },
  });
});

t.test("the body panel's view: odometry (or the map pose) moves the body, its path grows only when it moves, bounded", async (t) => {
  let s = initialState('drive');
  const ctx = (values: Record<string, unknown>, at = 1) => (s = reduce(s, { type: 'context', at, source: 'background.BodyInput', values } as never));
  ctx({ gps_fix: true });
  t.equal(s.body, null, 'no body before a pose');
  ctx({ battery_percent: 99.5, odom_x: 0, odom_y: 0, odom_heading: 0, odom_distance: 0 });
  ctx({ odom_x: 0, odom_y: 0, odom_heading: 90 });
  ctx({ odom_x: 0, odom_y: 1, odom_heading: 90, odom_distance: 1 });
  t.match(s.body, {
    x: 0,
    y: 1,
    heading: 90,
    distance: 1,
    battery: 99.5,
    path: [
      [0, 0],
      [0, 1],
    ],
  });
  ctx({ localized: true, map_x: 2, map_y: 1, map_heading: 0 });
  t.same(s.body?.path.at(-1), [2, 1], 'a map pose moves it too');
  for (let i = 0; i < BODY_PATH + 10; i++) ctx({ odom_x: i, odom_y: 5 });
  t.equal(s.body?.path.length, BODY_PATH, 'the path keeps the newest points only');
});

t.test('a failure repeated with other numbers folds into the newest entry; another failure starts a new one', async (t) => {
  const mic = (ms: number) => ({ type: 'error', source: 'input.Voice', message: `microphone: no microphone; the device is reopened in ${ms} ms` });
  const s = run([mic(442), mic(354), mic(399), { type: 'error', source: 'model', message: 'timeout' }, mic(371)]);
  t.equal(s.errors.length, 3, 'three entries: the folded run, the model failure, the newest microphone failure');
  t.match(s.errors[2], { source: 'input.Voice', repeats: 2, first: 1000, at: 1002, message: /reopened in 399 ms/ });
  t.match(s.errors[1], { source: 'model', message: 'timeout' });
  t.equal(s.errors[0]!.repeats, undefined, 'a repeat after another failure is a new entry');
  const other = run([mic(442), { type: 'error', source: 'input.Camera', message: 'microphone: no microphone; the device is reopened in 10 ms' }]);
  t.equal(other.errors.length, 2, 'the same text from another source is not folded');
});
