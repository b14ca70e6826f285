// Proves a Prometheus scrape of the loopback endpoint returns the runtime's metrics, and stop() frees the port.
import t from 'tap';
import { Metrics, MetricsServer } from '../../src/metrics/prometheus.js';

t.test('GET /metrics scrapes, other paths 404, stop closes the port', async (t) => {
  const metrics = new Metrics();
  metrics.recordTick('idle', 12);
  const server = new MetricsServer(metrics, { port: 0 });
  const { url, host, port } = await server.start();
  t.teardown(() => server.stop());
  t.equal(host, '127.0.0.1');
  t.ok(port > 0);

  const res = await fetch(url);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const body = await res.text();
  t.match(body, /^cortexd_ticks_total\{mode="idle"\} 1$/m);
  t.match(body, /^cortexd_nodejs_eventloop_lag_seconds /m);

  const other = await fetch(url.replace('/metrics', '/'));
  t.equal(other.status, 404);
  await other.text();

  await t.rejects(server.start(), /already running/);
  await server.stop();
  await t.rejects(fetch(url), 'nothing listens after stop()');
});

t.test('a port in use is a clear error, not a crash', async (t) => {
  const a = new MetricsServer(new Metrics({ defaultMetrics: false }), { port: 0 });
  const { port } = await a.start();
  t.teardown(() => a.stop());
  const b = new MetricsServer(new Metrics({ defaultMetrics: false }), { port });
  await t.rejects(b.start(), /cannot serve metrics on 127\.0\.0\.1:\d+/);
});
