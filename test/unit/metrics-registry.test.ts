// Proves the runtime's metrics carry the names, labels and units a Prometheus user expects, and the endpoint settings stay on loopback.
import t from 'tap';
import { Metrics, MetricsServer, isLoopback, metricsOptionsFromEnv } from '../../src/metrics/prometheus.js';

/** The value of one sample line, e.g. sample(text, 'cortexd_ticks_total{mode="idle"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

t.test('every listed metric is exposed with its unit converted to seconds', async (t) => {
  const m = new Metrics({ defaultMetrics: false });
  m.enterMode('idle', 2);
  m.recordTick('idle', 30);
  m.recordTick('idle', 0);
  m.recordModelCall('provider_a/gen-4', 1500);
  m.recordModelCall('provider_a/gen-4', 800, 'timeout');
  m.setSocketState('asr', 'connecting');
  m.setSocketState('asr', 'streaming');
  m.setSocketState('asr', 'backing_off');
  m.setSocketState('asr', 'connecting');
  m.setSocketState('asr', 'streaming');
  m.setSocketState('asr', 'connecting');
  m.recordDroppedFrames('camera', 3);
  m.recordDroppedAudio('mic', 3200);
  m.setActionQueueLength('speak', 2);
  m.recordCu('chat', 0.25);
  m.recordCu('tts', 0);
  const text = await m.scrape();

  t.equal(sample(text, 'cortexd_ticks_total{mode="idle"}'), 2);
  t.equal(sample(text, 'cortexd_tick_rate_hertz{mode="idle"}'), 2);
  t.equal(sample(text, 'cortexd_mode_current{mode="idle"}'), 1);
  t.equal(sample(text, 'cortexd_tick_lateness_seconds_sum{mode="idle"}'), 0.03, 'lateness in seconds');
  t.equal(sample(text, 'cortexd_tick_lateness_seconds_bucket{le="0.001",mode="idle"}'), 1);
  t.equal(sample(text, 'cortexd_model_latency_seconds_sum{model="provider_a/gen-4"}'), 1.5);
  t.equal(sample(text, 'cortexd_model_latency_seconds_count{model="provider_a/gen-4"}'), 1, 'failed calls are not latencies');
  t.equal(sample(text, 'cortexd_model_errors_total{model="provider_a/gen-4",kind="timeout"}'), 1);
  t.equal(sample(text, 'cortexd_socket_state{socket="asr",state="connecting"}'), 1);
  t.equal(sample(text, 'cortexd_socket_state{socket="asr",state="streaming"}'), 0);
  t.equal(sample(text, 'cortexd_socket_reconnects_total{socket="asr"}'), 1, 'the first connection is not a reconnect; the second is');
  t.equal(sample(text, 'cortexd_frames_dropped_total{input="camera"}'), 3);
  t.equal(sample(text, 'cortexd_audio_dropped_bytes_total{input="mic"}'), 3200);
  t.equal(sample(text, 'cortexd_action_queue_length{action="speak"}'), 2);
  t.equal(sample(text, 'cortexd_cu_spent_total{service="chat"}'), 0.25);
  t.match(text, /# HELP cortexd_cu_spent_total Compute units/);
});

t.test('switching mode moves the current-mode flag', async (t) => {
  const m = new Metrics({ defaultMetrics: false });
  m.enterMode('idle', 1);
  m.enterMode('patrol', 5);
  const text = await m.scrape();
  t.equal(sample(text, 'cortexd_mode_current{mode="patrol"}'), 1);
  t.equal(sample(text, 'cortexd_mode_current{mode="idle"}'), undefined);
});

t.test('process metrics (event loop lag, memory) are included by default', async (t) => {
  const text = await new Metrics().scrape();
  t.match(text, /^cortexd_nodejs_eventloop_lag_seconds /m);
  t.match(text, /^cortexd_process_resident_memory_bytes /m);
});

t.test('two runtimes in one process keep separate registries', async (t) => {
  const a = new Metrics({ defaultMetrics: false });
  const b = new Metrics({ defaultMetrics: false });
  a.recordCu('chat', 1);
  t.equal(sample(await b.scrape(), 'cortexd_cu_spent_total{service="chat"}'), undefined);
});

t.test('the endpoint is off by default and loopback only', async (t) => {
  t.equal(metricsOptionsFromEnv({}), undefined);
  t.equal(metricsOptionsFromEnv({ CORTEX_METRICS_PORT: '' }), undefined);
  t.same(metricsOptionsFromEnv({ CORTEX_METRICS_PORT: '9464' }), { port: 9464 });
  t.same(metricsOptionsFromEnv({ CORTEX_METRICS_PORT: '9464', CORTEX_METRICS_HOST: '::1' }), { port: 9464, host: '::1' });
  t.throws(() => metricsOptionsFromEnv({ CORTEX_METRICS_PORT: 'nine' }), /CORTEX_METRICS_PORT/);
  for (const h of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) t.ok(isLoopback(h), h);
  for (const h of ['0.0.0.0', '::', '192.168.1.5', 'robot.local']) t.notOk(isLoopback(h), h);
  t.throws(() => new MetricsServer(new Metrics({ defaultMetrics: false }), { port: 0, host: '0.0.0.0' }), /loopback only/);
});
