// Proves every Prometheus metric is fed from bus events alone: ticks and modes, model calls and errors, socket state and reconnects from stream events, drops, queue length, CU per service.
import t from 'tap';
import { SimulatedClock } from 'xstate';
import { Subject } from 'rxjs';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { Metrics } from '../../src/metrics/prometheus.js';
import { feedMetrics } from '../../src/metrics/feed.js';
import { startAsrStream } from '../../actors/streams/asr-stream.js';
import { forwardStreamEvents, toStreamEvent } from '../../actors/streams/stream-event.js';
import { FakeLink } from '../support/fake-link.js';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function rig() {
  const bus = new AgentBus();
  const metrics = new Metrics({ defaultMetrics: false });
  const sub = feedMetrics(bus, metrics, { hertzOf: (m) => ({ idle: 1, explore: 5 })[m] ?? 1, modelOf: (m) => (m === 'explore' ? 'CloudLLM' : undefined) });
  const at = 1_700_000_000_000;
  const emit = (e: Record<string, unknown>) => bus.emit({ at, ...e } as AgentEvent);
  return { bus, metrics, sub, emit };
}

t.test('ticks, modes, model answers and errors', async (t) => {
  const { metrics, emit, sub } = rig();
  emit({ type: 'agent.started', config: 'default', mode: 'idle' });
  emit({ type: 'tick', mode: 'idle', n: 1, late_skipped: 0, lateness_ms: 20, called_model: false });
  emit({ type: 'mode.changed', from: 'idle', to: 'explore', trigger: 'input_triggered', reason: 'keyword' });
  emit({ type: 'tick', mode: 'explore', n: 1, late_skipped: 0, lateness_ms: 0, called_model: true });
  emit({ type: 'model.answer', mode: 'explore', tick: 1, model: 'provider_a/gen-4o-mini', tool_calls: [], latency_ms: 800, cost_cu: 2 });
  emit({ type: 'model.error', mode: 'explore', tick: 2, error: '503: Failed to connect' });
  emit({ type: 'model.error', mode: 'explore', tick: 3, error: 'timed out', model: 'provider_a/gen-4o-mini', kind: 'timeout' });
  const text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_ticks_total{mode="idle"}'), 1);
  t.equal(sample(text, 'cortexd_tick_lateness_seconds_sum{mode="idle"}'), 0.02);
  t.equal(sample(text, 'cortexd_mode_current{mode="explore"}'), 1);
  t.equal(sample(text, 'cortexd_tick_rate_hertz{mode="explore"}'), 5);
  t.equal(sample(text, 'cortexd_model_latency_seconds_sum{model="provider_a/gen-4o-mini"}'), 0.8);
  t.equal(sample(text, 'cortexd_model_errors_total{model="CloudLLM",kind="error"}'), 1, 'an error without a model is labelled from the configuration');
  t.equal(sample(text, 'cortexd_model_errors_total{model="provider_a/gen-4o-mini",kind="timeout"}'), 1);
  t.equal(sample(text, 'cortexd_cu_spent_total{service="chat"}'), 2);
  sub.unsubscribe();
});

t.test('actions: queue length and the CU of speech', async (t) => {
  const { metrics, emit } = rig();
  const action = { type: 'action', mode: 'explore', label: 'speak', name: 'speak', connector: 'speechlab_tts' };
  emit({ ...action, state: 'queued', queue: 2 });
  emit({ ...action, state: 'running', queue: 1 });
  emit({ ...action, state: 'done', queue: 1, cost_cu: 3 });
  emit({ ...action, label: 'move', name: 'move', connector: 'console', state: 'done' });
  const text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_action_queue_length{action="speak"}'), 1);
  t.equal(sample(text, 'cortexd_action_queue_length{action="move"}'), undefined, 'no length reported, none invented');
  t.equal(sample(text, 'cortexd_cu_spent_total{service="tts"}'), 3);
});

t.test('a real ASR stream cut and reconnected, forwarded to the bus: socket state, reconnects, dropped audio and CU', async (t) => {
  const { bus, metrics, emit } = rig();
  const seen: AgentEvent[] = [];
  bus.events$.subscribe((e) => seen.push(e));
  const clock = new SimulatedClock();
  const links: FakeLink[] = [];
  const audio = new Subject<Buffer>();
  const stream = startAsrStream({
    audio$: audio,
    rate: 16000,
    ringMs: 100, // 3200 bytes
    clock,
    now: () => clock.now(),
    random: () => 1,
    timing: { minCycleMs: 0, backoffInitialMs: 100 },
    connect: async () => {
      const l = new FakeLink();
      links.push(l);
      return l;
    },
    onEvent: (e) => {
      const out = toStreamEvent('asr', 'GoogleASRInput', e as never, clock.now());
      if (out && (e.type === 'asr.state' || e.type === 'asr.stats')) bus.emit(out);
    },
  });
  const tick = () => new Promise((r) => setImmediate(r));
  await tick();
  links[0]!.say({ type: 'connection', message: 'Connected', clientId: 'c' });
  audio.next(Buffer.alloc(3200));
  links[0]!.server({ type: 'close', code: 1006, reason: '' });
  audio.next(Buffer.alloc(3200));
  audio.next(Buffer.alloc(3200)); // the ring holds one chunk: one dropped
  await tick();
  clock.increment(5000); // a stats tick on the new socket
  let text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_socket_state{socket="asr/GoogleASRInput",state="streaming"}'), 1);
  t.equal(sample(text, 'cortexd_socket_reconnects_total{socket="asr/GoogleASRInput"}'), 1);
  t.equal(sample(text, 'cortexd_audio_dropped_bytes_total{input="GoogleASRInput"}'), 3200);
  const cu = sample(text, 'cortexd_cu_spent_total{service="asr"}')!;
  t.ok(Math.abs(cu - ((6400 + 3200) / 32000 / 60) * 35) < 1e-6, `CU of the audio and keepalive silence sent (${cu})`);
  t.same(
    seen.filter((e) => e.type === 'stream').map((e) => (e as { state: string }).state),
    ['connecting', 'streaming', 'connecting', 'streaming', 'streaming'],
    'state changes, then a counter update',
  );
  stream.stop();
  text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_socket_state{socket="asr/GoogleASRInput",state="closed"}'), 1);

  // A new stream of the same input counts from zero again: its counters add, they do not subtract.
  emit({ type: 'stream', kind: 'asr', input: 'GoogleASRInput', state: 'connecting', dropped_bytes: 0 });
  emit({ type: 'stream', kind: 'asr', input: 'GoogleASRInput', state: 'streaming', dropped_bytes: 100 });
  text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_audio_dropped_bytes_total{input="GoogleASRInput"}'), 3300);
  t.equal(sample(text, 'cortexd_socket_reconnects_total{socket="asr/GoogleASRInput"}'), 1, 'a new stream is not a reconnect');
});

t.test('frames dropped, from vision stream events', async (t) => {
  const { metrics, emit } = rig();
  emit({ type: 'stream', kind: 'vlm', input: 'VLMInput', state: 'streaming', frames_sent: 10, frames_dropped: 2 });
  emit({
    type: 'stream',
    kind: 'vlm',
    input: 'VLMInput',
    state: 'backingOff',
    attempt: 2,
    delay_ms: 500,
    reason: 'socket closed (1006)',
    frames_sent: 12,
    frames_dropped: 5,
  });
  const text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_frames_dropped_total{input="VLMInput"}'), 5);
  t.equal(sample(text, 'cortexd_socket_state{socket="vlm/VLMInput",state="backing_off"}'), 1);
  t.equal(sample(text, 'cortexd_cu_spent_total{service="vlm"}'), undefined, 'vision is not metered');
});

t.test('forwardStreamEvents copies only the stream fields', async (t) => {
  const out: unknown[] = [];
  const listeners = new Map<string, (e: unknown) => void>();
  const actor = { on: (type: string, fn: (e: unknown) => void) => (listeners.set(type, fn), { unsubscribe: () => listeners.delete(type) }) };
  const sub = forwardStreamEvents(
    actor,
    'vlm',
    'VLMInput',
    (e) => out.push(e),
    () => 42,
  );
  listeners.get('vlm.state')!({ type: 'vlm.state', state: 'backingOff', attempt: 3, delay_ms: 2000, reason: 'x', breaker: true, connections: 4, secret: 'no' });
  listeners.get('vlm.stats')!({ type: 'vlm.stats', state: 'nonsense' });
  t.same(out, [
    { type: 'stream', at: 42, kind: 'vlm', input: 'VLMInput', state: 'backingOff', attempt: 3, delay_ms: 2000, connections: 4, reason: 'x', breaker: true },
  ]);
  sub.unsubscribe();
  t.equal(listeners.size, 0);
});

t.test('turn latency by stage, from turn events, the origin stage left out', async (t) => {
  const { metrics, emit, sub } = rig();
  const turn = (stages: Record<string, number>) =>
    emit({
      type: 'turn',
      mode: 'talk',
      tick: 1,
      model: 'm',
      streamed: true,
      origin: 'speech_end',
      origin_at: 1,
      stages_ms: stages,
      sentences: 3,
      spoken: 3,
      gaps_ms: [],
      outcome: 'spoken',
    });
  turn({ speech_end: 0, final_transcript: 700, request_sent: 710, first_token: 1000, first_sentence: 1200, first_audio_byte: 1300, playback_start: 1301 });
  turn({ speech_end: 0, final_transcript: 900, request_sent: 905, first_token: 1300, playback_start: 1700, first_action: 1400 });
  const text = await metrics.scrape();
  t.equal(sample(text, 'cortexd_turn_latency_seconds_count{stage="playback_start"}'), 2);
  t.equal(sample(text, 'cortexd_turn_latency_seconds_sum{stage="playback_start"}'), 3.001);
  t.equal(sample(text, 'cortexd_turn_latency_seconds_bucket{le="1.5",stage="playback_start"}'), 1, 'one turn had its first sound within 1.5 s');
  t.equal(sample(text, 'cortexd_turn_latency_seconds_count{stage="first_action"}'), 1);
  t.equal(sample(text, 'cortexd_turn_latency_seconds_count{stage="speech_end"}'), undefined, 'the origin is not a latency');
  sub.unsubscribe();
});
