// The terminal view's lines: escaping before colour, repeated warnings held back, socket storms summarised, answers not spoken, cancelled hooks, partials hidden.
import t from 'tap';
import { TerminalView, replayFacts, speechFacts } from '../../cli/view.js';
import type { AgentEvent, StreamEvent } from '../../src/cortex/events.js';
import { loadConfig } from '../../src/config/load.js';

function view(color = false, facts = {}) {
  const lines: string[] = [];
  const v = new TerminalView({ color, write: (text) => lines.push(...text.split('\n').filter(Boolean)), facts });
  // Without the clock at the start of each line.
  return { v, lines, text: () => lines.map((l) => l.replace(/^(\x1b\[2m)?\d\d:\d\d:\d\d(\x1b\[0m)? /, '')) };
}

t.test("a newline or escape inside a transcript is shown escaped; the view's own colours are real escape sequences", async (t) => {
  const { v, lines, text } = view(true);
  v.render({ type: 'input', at: 0, mode: 'idle', input: 'TextInput', text: 'hello\nworld \x1b[31mred', final: true });
  t.equal(text()[0], '\x1b[32mheard (TextInput):\x1b[0m hello\\nworld \\u001b[31mred');
  t.equal(lines.length, 1, 'one line');
});

t.test('a warning repeated every tick is one line; it is counted when it comes back after the window, and at stop', async (t) => {
  const { v, text } = view(false);
  const sink = v.logDestination();
  for (let i = 0; i < 20; i++)
    sink.write(
      `${JSON.stringify({ level: 40, time: 1000 + i * 1000, mode: 'explore', msg: `history summary failed, ${i % 3} exchange(s) dropped: empty summary` })}\n`,
    );
  t.same(text(), ['warning (explore): history summary failed, 0 exchange(s) dropped: empty summary']);
  sink.write(`${JSON.stringify({ level: 40, time: 1000 + 301_000, msg: 'history summary failed, 1 exchange(s) dropped: empty summary' })}\n`);
  t.match(text()[1], /^warning: history summary failed, 1 exchange\(s\) dropped: empty summary \(and 19 more like it before\)$/);
  sink.write(`${JSON.stringify({ level: 50, time: 1000 + 302_000, msg: 'something else' })}\n`);
  t.equal(text()[2], 'error: something else', 'another message is shown at once');
});

t.test('a reconnect storm: the first loss and recovery at once, then one summary per 30 s; a failure always', async (t) => {
  const { v, text } = view(false);
  const s = (at: number, state: StreamEvent['state'], extra: Partial<StreamEvent> = {}): StreamEvent => ({
    type: 'stream',
    at,
    kind: 'asr',
    input: 'SpeechlabASRInput',
    state,
    ...extra,
  });
  v.render(s(0, 'connecting', { attempt: 1 }));
  v.render(s(100, 'streaming'));
  for (let i = 0; i < 40; i++) {
    v.render(s(1500 + i * 1500, 'connecting', { attempt: 1, reason: 'socket closed (1006)' }));
    v.render(s(1510 + i * 1500, 'streaming'));
  }
  v.render(s(70_000, 'backingOff', { attempt: 2, delay_ms: 2000, breaker: true, reason: 'connection refused' }));
  v.render(s(80_000, 'failed', { reason: 'Invalid API key' }));
  t.same(text(), [
    'speech recognition socket (SpeechlabASRInput) connected',
    'speech recognition socket (SpeechlabASRInput) reconnecting: socket closed (1006)',
    'speech recognition socket (SpeechlabASRInput) streaming again',
    'speech recognition socket (SpeechlabASRInput) streaming again (20 reconnects in the last 30 s; last reason: socket closed (1006))',
    'speech recognition socket (SpeechlabASRInput) still unsteady: 19 reconnects, 1 failed attempt in the last 38 s, next try in 2.0 s (breaker open): connection refused',
    'speech recognition socket (SpeechlabASRInput) failed: Invalid API key',
  ]);
});

t.test('one lost connection: said at once, and that it streams again', async (t) => {
  const { v, text } = view(false);
  const s = (at: number, state: StreamEvent['state'], extra: Partial<StreamEvent> = {}): StreamEvent => ({
    type: 'stream',
    at,
    kind: 'vlm',
    input: 'VLMInput',
    state,
    ...extra,
  });
  v.render(s(0, 'streaming'));
  v.render(s(10_000, 'connecting', { reason: 'socket closed (1006)' }));
  v.render(s(10_020, 'streaming'));
  for (let at = 15_000; at <= 45_000; at += 5000) v.render(s(at, 'streaming', { frames_sent: at / 1000 }));
  t.same(text(), [
    'vision socket (VLMInput) connected',
    'vision socket (VLMInput) reconnecting: socket closed (1006)',
    'vision socket (VLMInput) streaming again',
  ]);
});

t.test('a stream stopped with its mode and started with the next: connected again, not a reconnect; held-back reconnects said at the stop', async (t) => {
  const { v, text } = view(false);
  const s = (at: number, state: StreamEvent['state'], extra: Partial<StreamEvent> = {}): StreamEvent => ({
    type: 'stream',
    at,
    kind: 'asr',
    input: 'SpeechlabASRInput',
    state,
    ...extra,
  });
  v.render(s(0, 'connecting', { attempt: 0 }));
  v.render(s(40, 'streaming'));
  v.render(s(2_000, 'stopped'));
  v.render(s(6_000, 'connecting', { attempt: 0 }));
  v.render(s(6_050, 'streaming'));
  // A storm in this run: the first loss and recovery are said, the next ones held back by the window...
  v.render(s(7_000, 'connecting', { reason: 'socket closed (1006)' }));
  v.render(s(7_020, 'streaming'));
  v.render(s(8_000, 'connecting', { reason: 'socket closed (1006)' }));
  v.render(s(8_020, 'streaming'));
  // ...and said when the mode stops the stream.
  v.render(s(9_000, 'stopped'));
  t.same(text(), [
    'speech recognition socket (SpeechlabASRInput) connected',
    'speech recognition socket (SpeechlabASRInput) connected',
    'speech recognition socket (SpeechlabASRInput) reconnecting: socket closed (1006)',
    'speech recognition socket (SpeechlabASRInput) streaming again',
    'speech recognition socket (SpeechlabASRInput): 1 reconnect in the last 2.0 s',
  ]);
});

t.test("a microphone's recorder: its first open is not said, its outages and its failure are, in a device's words", async (t) => {
  const { v, text } = view(false);
  const s = (at: number, state: StreamEvent['state'], extra: Partial<StreamEvent> = {}): StreamEvent => ({
    type: 'stream',
    at,
    kind: 'mic',
    input: 'SpeechlabASRInput',
    state,
    ...extra,
  });
  v.render(s(0, 'connecting'));
  v.render(s(1, 'backingOff', { delay_ms: 300, reason: 'connect failed: microphone: arecord is not installed (not found on PATH)' }));
  v.render(s(5, 'streaming'));
  v.render(s(40_000, 'backingOff', { delay_ms: 500, reason: 'microphone: arecord exited with code 1' }));
  v.render(s(40_500, 'streaming'));
  v.render(s(75_000, 'connecting', { reason: 'reconnecting at once: microphone: arecord was stopped (SIGKILL)' }));
  v.render(s(75_010, 'streaming'));
  v.render(s(80_000, 'failed', { reason: 'microphone: no microphone (arecord found no capture device)' }));
  t.same(text(), [
    'microphone (SpeechlabASRInput) cannot open, next try in 0.3 s: microphone: arecord is not installed (not found on PATH)',
    'microphone (SpeechlabASRInput) open',
    'microphone (SpeechlabASRInput) cannot open, next try in 0.5 s: microphone: arecord exited with code 1',
    'microphone (SpeechlabASRInput) streaming again',
    'microphone (SpeechlabASRInput) reopening: microphone: arecord was stopped (SIGKILL)',
    'microphone (SpeechlabASRInput) streaming again',
    'microphone (SpeechlabASRInput) failed: microphone: no microphone (arecord found no capture device)',
  ]);
});

t.test('what the robot says, answers it cannot say, cancelled hooks, partials and vision', async (t) => {
  const loaded = await loadConfig({ name: 'default' });
  const { v, text } = view(false, { ...speechFacts(loaded.config), displayNames: { sleep: 'Sleep' } });
  const events: AgentEvent[] = [
    { type: 'action', at: 0, mode: 'idle', label: 'speak', name: 'speak', connector: 'local_tts', state: 'queued', value: { sentence: 'Hello!' } },
    { type: 'action', at: 0, mode: 'idle', label: 'speak', name: 'speak', connector: 'local_tts', state: 'running', value: { sentence: 'Hello!' } },
    {
      type: 'action',
      at: 0,
      mode: 'idle',
      label: 'speak',
      name: 'speak',
      connector: 'local_tts',
      state: 'interrupted',
      value: { sentence: 'Hello!' },
      error: 'action stopped',
    },
    {
      type: 'hook',
      at: 0,
      mode: 'conversation',
      hook_type: 'on_entry',
      handler_type: 'message "Hi"',
      ok: false,
      error: 'cancelled: its mode was left',
      cancelled: true,
    },
    { type: 'model.answer', at: 0, mode: 'sleep', tick: 1, model: 'm', text: 'I am Pip.', tool_calls: [], latency_ms: 5, cost_cu: 3 },
    { type: 'mode.changed', at: 0, from: 'idle', to: 'sleep', trigger: 'manual', reason: 'manual: from WebSim' },
    { type: 'stream', at: 0, kind: 'asr', input: 'SpeechlabASRInput', state: 'streaming' },
    { type: 'input', at: 0, mode: 'explore', input: 'SpeechlabASRInput', text: 'turn', final: false },
    { type: 'input', at: 0, mode: 'explore', input: 'SpeechlabASRInput', text: 'turn left', final: true },
    { type: 'input', at: 0, mode: 'explore', input: 'LocalVLMInput', text: 'I see no faces. Slight motion (2% of the view).', final: false },
    { type: 'input', at: 0, mode: 'explore', input: 'LocalVLMInput', text: 'I see no faces. Slight motion (4% of the view).', final: false },
    { type: 'input', at: 0, mode: 'explore', input: 'LocalVLMInput', text: 'I see 1 face (center). Slight motion (4% of the view).', final: false },
  ];
  for (const e of events) v.render(e);
  t.same(text(), [
    '  says "Hello!"',
    'on_entry message "Hi" hook of conversation cancelled: its mode was left',
    'model m 5 ms, 3 CU: "I am Pip." (not spoken: mode sleep has no speak action)',
    'mode idle -> sleep (Sleep) (manual: from WebSim)',
    'speech recognition socket (SpeechlabASRInput) connected',
    'heard (SpeechlabASRInput): turn left',
    'LocalVLMInput: I see no faces. Slight motion (2% of the view).',
    'LocalVLMInput: I see 1 face (center). Slight motion (4% of the view).',
  ]);
});

t.test('the start lines: the restored mode with the --fresh command, where speech goes', async (t) => {
  const loaded = await loadConfig({ name: 'default' });
  const facts = speechFacts(loaded.config);
  t.same(facts.speakingModes, ['idle', 'conversation', 'explore']);
  const { v, text } = view(false, {
    ...facts,
    defaultMode: 'idle',
    restoredMode: 'sleep',
    freshCommand: 'cortexd run default --fresh',
    displayNames: { idle: 'Idle', sleep: 'Sleep' },
  });
  v.render({ type: 'agent.started', at: 0, config: 'default', mode: 'sleep' });
  v.render({ type: 'simulator.ready', at: 0, simulator: 'WebSim', url: 'http://127.0.0.1:8000/' });
  const [start, restored, speech, typed, websim] = text();
  t.equal(start, 'cortexd: agent default starting in mode sleep (Sleep)');
  t.equal(restored, '  mode sleep was restored from the last run (mode memory); `cortexd run default --fresh` starts in idle (Idle)');
  t.match(speech, /^ {2}speech goes to WAV files in .*\/speech; hear the newest: aplay "\$\(ls -t .*\/speech\/\*\.wav \| head -1\)"$/);
  t.equal(typed, '  type a line and press Enter to talk to it; Ctrl-C stops');
  t.equal(websim, 'WebSim: http://127.0.0.1:8000/ (open it in a browser)');
});

t.test('a generated WebSim token: the start line is the address with #token=, read from the 0600 file the event names', async (t) => {
  const dir = t.testdir({ 'websim-token': 'Zq3-vT9_kLm2Xw8RpA4sYb7NcE1uHd6G\n' });
  const { v, text } = view(false);
  v.render({ type: 'simulator.ready', at: 0, simulator: 'WebSim', url: 'http://127.0.0.1:8000/', token_file: `${dir}/websim-token` });
  const [address, hint] = text();
  t.equal(address, 'WebSim: http://127.0.0.1:8000/#token=Zq3-vT9_kLm2Xw8RpA4sYb7NcE1uHd6G (open it in a browser to watch and act)');
  t.match(hint, /only watches and latches the e-stop; the token is kept in .*websim-token$/);
  const gone = view(false);
  gone.v.render({ type: 'simulator.ready', at: 0, simulator: 'WebSim', url: 'http://127.0.0.1:8000/', token_file: `${dir}/missing` });
  t.match(
    gone.text()[0],
    /^WebSim: http:\/\/127\.0\.0\.1:8000\/ \(watch only: the token to act is in .*missing\)$/,
    'an unreadable file: the address without it',
  );
});

t.test("a safety stop is one line: the governor's log line is not printed beside its event", async (t) => {
  const { v, text } = view(false);
  const sink = v.logDestination();
  sink.write(
    `${JSON.stringify({ level: 40, time: 1000, mode: 'explore', safety: 'stop', cause: 'deadman', msg: 'safety: stop sent (deadman): dead-man timer: no motion command for 3 s' })}\n`,
  );
  v.render({ type: 'safety', at: 1000, kind: 'stop', cause: 'deadman', reason: 'dead-man timer: no motion command for 3 s', mode: 'explore' });
  t.same(text(), ['safety stop (deadman): dead-man timer: no motion command for 3 s']);
  v.render({ type: 'safety', at: 7000, kind: 'stop', cause: 'deadman', reason: 'dead-man timer: no motion command for 3 s', mode: 'explore' });
  t.equal(text().length, 1, 'the next dead-man stop a few seconds later is held back');
  v.render({ type: 'safety', at: 8000, kind: 'estop', source: 'websim', reason: 'button' });
  t.match(text()[1], /^EMERGENCY STOP by websim: button/, 'an e-stop is always shown');
});

t.test('no sound card: the start says speech goes to files, and the fallback later is not said again', async (t) => {
  const loaded = await loadConfig({ name: 'conversation' }, { env: {} });
  const facts = speechFacts(loaded.config, { card: false, fallbackDir: '/var/lib/cortexd/speech' });
  t.equal(facts.noSoundCard, true);
  const { v, text } = view(false, { ...facts, defaultMode: 'conversation', typed: false });
  v.render({ type: 'agent.started', at: 0, config: 'conversation', mode: 'conversation' });
  v.logDestination().write(
    `${JSON.stringify({ level: 40, time: 1, speaker_fallback: true, msg: 'no sound card: speech saved to /var/lib/cortexd/speech instead' })}\n`,
  );
  const all = text().join('\n');
  t.match(all, /speech goes to WAV files in \/var\/lib\/cortexd\/speech \(no sound card here; a WebSim page plays it too\)/);
  t.notMatch(all, /the speaker/, 'never "the speaker"');
  t.notMatch(all, /no sound card: speech saved/, 'the fallback is not news: the start said it');

  // With a sound card the start says the speaker; a fallback then (a card the user may not open) is said.
  const withCard = view(false, { ...speechFacts(loaded.config, { card: true, fallbackDir: '/x' }), defaultMode: 'conversation', typed: false });
  withCard.v.render({ type: 'agent.started', at: 0, config: 'conversation', mode: 'conversation' });
  withCard.v.logDestination().write(`${JSON.stringify({ level: 40, time: 1, speaker_fallback: true, msg: 'no sound card: speech saved to /x instead' })}\n`);
  t.match(withCard.text().join('\n'), /speech goes to the speaker[\s\S]*warning: no sound card: speech saved to \/x instead/);
});

t.test('a replayed microphone says so at the start of its mode and on each thing it hears', async (t) => {
  const { simulateConfig } = await import('../../src/config/simulate.js');
  const loaded = await loadConfig({ name: 'default' });
  const facts = replayFacts(loaded.config);
  t.same(Object.keys(facts.replayedMicrophones ?? {}), ['explore'], 'the default companion replays a recording in explore');
  const { v, text } = view(false, { ...facts, defaultMode: 'idle' });
  v.render({ type: 'agent.started', at: 0, config: 'default', mode: 'idle' });
  v.render({ type: 'mode.changed', at: 1, from: 'idle', to: 'explore', trigger: 'input_triggered', reason: 'keyword "explore"' });
  v.render({ type: 'input', at: 2, mode: 'explore', input: 'SpeechlabASRInput', text: 'turn left', final: true });
  v.render({ type: 'mode.changed', at: 3, from: 'explore', to: 'idle', trigger: 'timeout', reason: 'timeout' });
  v.render({ type: 'mode.changed', at: 4, from: 'idle', to: 'explore', trigger: 'input_triggered', reason: 'keyword "explore"' });
  const lines = text();
  t.equal(lines.filter((l) => /SpeechlabASRInput hears a recording \(turn_left\.wav, replayed\), not a microphone/.test(l)).length, 1, 'said once per run');
  t.ok(lines.includes('heard (SpeechlabASRInput, from the recording turn_left.wav): turn left'));
  // --simulate replays every microphone: the same lines.
  t.ok(replayFacts({ modes: (simulateConfig(JSON.parse(JSON.stringify(loaded.config))).config as typeof loaded.config).modes }).replayedMicrophones?.explore);
});

t.test('an idle socket the server closes normally and that reopens at once is not news; a real drop is', async (t) => {
  const { v, text } = view(false);
  const s = (e: Partial<StreamEvent>) => v.render({ type: 'stream', at: 0, kind: 'asr', input: 'SpeechlabASRInput', state: 'streaming', ...e } as StreamEvent);
  s({ at: 0 });
  for (let i = 1; i <= 5; i++) {
    s({ at: i * 60_000, state: 'connecting', reason: 'reconnecting at once: socket closed (1000 silence timeout)', routine: true, attempt: 1 });
    s({ at: i * 60_000 + 50 });
  }
  t.same(text(), ['speech recognition socket (SpeechlabASRInput) connected'], 'five idle minutes: nothing after the first connection');
  s({ at: 400_000, state: 'connecting', reason: 'reconnecting at once: socket closed (1006)', attempt: 1 });
  t.match(text().at(-1), /reconnecting: socket closed \(1006\)/, 'an abnormal close is said');
});
