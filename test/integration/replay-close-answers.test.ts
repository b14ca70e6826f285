// A recording whose model answers came 50-70 ms apart (a loaded machine, a fast local model) replays to the same decisions: each recorded answer reaches the replay when it reached the run.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAIN } from '../helpers/agent-process.js';
import { LOOPBACK_URI } from '../helpers/dds-peers.js';

requireBuild();
const RECORDING = join(import.meta.dirname, '..', 'fixtures', 'recordings', 'ros2-topics-close-answers.mcap');

t.test('config/ros2_topics.json5 run under load: set_led, a refused colour, show_text, each one model answer after the last', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-replay-close-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  // A DDS domain no peer uses: the replay publishes what the recorded answers ask for, and nobody listens.
  const r = spawnSync(process.execPath, [MAIN, 'replay', RECORDING], {
    encoding: 'utf8',
    env: { ...process.env, CORTEX_STATE_DIR: state, CYCLONEDDS_URI: LOOPBACK_URI, ROS_DOMAIN_ID: '231' },
    timeout: 120_000,
  });
  t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  t.match(r.stdout, /2 recorded decisions, 2 replayed/);
  t.match(r.stdout, /same decisions/);
  t.notMatch(r.stdout, /were not asked again/, 'every recorded model answer was asked for again');
});
