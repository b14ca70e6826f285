// Proves the fleet settings a robot loads: off by default, on with CORTEX_MQTT_URL or a fleet block, the environment over the file, clear problems that never show a password.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostRobotId } from '../../src/config/fleet.js';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { loadObject, tempDir, tryLoad, validConfig, writeConfig } from '../helpers/config-fixtures.js';

const urid = 'OM1A2B3C4D5E6F';

t.test('off by default: no block and no CORTEX_MQTT_URL means no fleet channel', async (t) => {
  const r = await loadObject(t, validConfig());
  t.ok(r.ok);
  if (r.ok) t.equal(r.loaded.fleet, undefined);
});

t.test('CORTEX_MQTT_URL alone turns it on; the robot is its URID; defaults in milliseconds', async (t) => {
  const r = await loadObject(t, validConfig({ URID: urid }), { env: { CORTEX_MQTT_URL: 'mqtt://broker.lan' } });
  t.ok(r.ok, r.ok ? '' : r.lines.join('\n'));
  if (!r.ok) return;
  t.same(r.loaded.fleet, {
    url: 'mqtt://broker.lan',
    robotId: urid,
    prefix: 'cortexd',
    shareTranscripts: false,
    metricsIntervalMs: 10_000,
    commandMaxTtlMs: 300_000,
    sessionExpiryS: 86_400,
    backoffMaxMs: 30_000,
    operatorKeys: [],
    acceptAnonymousBroker: false,
  });
  t.match(r.loaded.sha256, /^[0-9a-f]{64}$/, 'the file is fingerprinted for the state message');
});

t.test('the environment wins over the block; credentials leave the URL; enabled: false wins over the environment', async (t) => {
  const dir = tempDir(t);
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, 'PEM');
  const block = {
    url: 'mqtts://user1:pw-in-url@file-broker:8883',
    robot_id: 'from-file',
    topic_prefix: 'lab/robots',
    ca_file: 'ca.pem',
    share_transcripts: true,
    metrics_interval_seconds: 0.5,
  };
  const file = await tryLoad(writeConfig(dir, 'robot', validConfig({ fleet: block })), { env: {} });
  t.ok(file.ok, file.ok ? '' : file.lines.join('\n'));
  if (file.ok) {
    t.match(file.loaded.fleet, {
      url: 'mqtts://file-broker:8883',
      username: 'user1',
      password: 'pw-in-url',
      robotId: 'from-file',
      prefix: 'lab/robots',
      shareTranscripts: true,
      metricsIntervalMs: 500,
    });
    t.equal(file.loaded.fleet?.caFile, ca, 'a relative CA file is relative to the configuration');
  }
  const env = {
    CORTEX_MQTT_URL: 'mqtt://env-broker:1884',
    CORTEX_MQTT_USERNAME: 'op',
    CORTEX_MQTT_PASSWORD: 'env-secret',
    CORTEX_MQTT_ROBOT_ID: 'r-env',
    CORTEX_MQTT_CA_FILE: ca,
  };
  const both = await loadObject(t, validConfig({ fleet: { ...block, ca_file: undefined } }), { env });
  t.ok(both.ok, both.ok ? '' : both.lines.join('\n'));
  if (both.ok) t.match(both.loaded.fleet, { url: 'mqtt://env-broker:1884', username: 'op', password: 'env-secret', robotId: 'r-env', caFile: ca });
  const off = await loadObject(t, validConfig({ fleet: { enabled: false } }), { env });
  t.ok(off.ok);
  if (off.ok) t.equal(off.loaded.fleet, undefined, 'fleet.enabled: false keeps the robot off the fleet');
});

t.test('without URID or robot_id the robot is named after its host, with a warning', async (t) => {
  const r = await loadObject(t, validConfig(), { env: { CORTEX_MQTT_URL: 'mqtt://b' } });
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.loaded.fleet?.robotId, hostRobotId());
  t.match(r.warnings.join('\n'), /fleet\.robot_id: no robot id .* host name/);
  t.equal(hostRobotId('My Robot #3.local'), 'My-Robot--3.local', 'characters a topic level cannot hold become -');
});

t.test('problems name the field and never repeat the URL or a password', async (t) => {
  const cases: Array<[Record<string, unknown>, Record<string, string>, RegExp]> = [
    [{ enabled: true }, {}, /fleet\.url: the fleet is enabled but names no broker: set fleet\.url or CORTEX_MQTT_URL/],
    [{ url: 'http://user:hunter2@broker' }, {}, /fleet\.url: scheme http is not an MQTT scheme/],
    [{}, { CORTEX_MQTT_URL: 'not a url hunter2' }, /CORTEX_MQTT_URL: not a URL/],
    [{ url: 'mqtt://b', robot_id: 'a/b+#' }, {}, /fleet\.robot_id: a robot id is 1 to 64 letters/],
    [{ url: 'mqtt://b', topic_prefix: 'x/#' }, {}, /fleet\.topic_prefix: a topic prefix is/],
    [{ url: 'mqtt://b', ca_file: '/nonexistent/ca.pem' }, {}, /fleet\.ca_file: cannot read \/nonexistent\/ca\.pem: ENOENT/],
    [{ url: 'mqtt://b', cert_file: '/etc/hostname' }, {}, /fleet\.cert_file: a client certificate needs both cert_file and key_file/],
    [{ url: 'mqtt://b', metrics_interval_seconds: -1 }, {}, /fleet\.metrics_interval_seconds/],
  ];
  for (const [block, env, expected] of cases) {
    const r = await loadObject(t, validConfig({ URID: urid, fleet: block }), { env });
    t.notOk(r.ok, JSON.stringify(block));
    if (r.ok) continue;
    const text = r.lines.join('\n');
    t.match(text, expected);
    t.notMatch(text, /hunter2/, 'no password in problems');
  }
});

t.test('the JSON Schema describes the fleet block', async (t) => {
  const schema = JSON.stringify(configJsonSchema());
  t.match(schema, /"fleet":\{[\s\S]*"share_transcripts"/);
  t.match(schema, /the fleet channel: state, events and metrics on an MQTT broker/);
  t.match(schema, /"MqttInput"/);
});
