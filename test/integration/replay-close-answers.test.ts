// A recording whose model answers came 50-70 ms apart (a loaded machine, a fast local model) replays to the same decisions, each when the run made it: a typed line's answer reaches the tick that answers that line.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAIN } from '../helpers/agent-process.js';
import { LOOPBACK_URI } from '../helpers/dds-peers.js';
import type { Decision } from '../../src/record/decisions.js';

requireBuild();
const RECORDING = join(import.meta.dirname, '..', 'fixtures', 'recordings', 'ros2-topics-close-answers.mcap');

t.test('config/ros2_topics.json5 run under load: set_led, a refused colour, show_text, each one model answer after the last', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-replay-close-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  // A DDS domain no peer uses: the replay publishes what the recorded answers ask for, and nobody listens.
  const r = spawnSync(process.execPath, [MAIN, 'replay', RECORDING, '--json'], {
    encoding: 'utf8',
    env: { ...process.env, CORTEX_STATE_DIR: state, CYCLONEDDS_URI: LOOPBACK_URI, ROS_DOMAIN_ID: '231' },
    timeout: 120_000,
  });
  t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  const result = JSON.parse(r.stdout) as {
    same: boolean;
    recorded: Decision[];
    replayed: Decision[];
    extraModelCalls: number;
    missedModelCalls: number;
  };
  t.ok(result.same, 'same decisions');
  t.equal(result.replayed.length, 2);
  // Each typed line's answer reaches the tick that answers that line, so each decision comes when it came in the run.
  result.recorded.forEach((d, i) => {
    const late = Math.abs((result.replayed[i]?.atMs ?? Number.POSITIVE_INFINITY) - d.atMs);
    t.ok(late <= 100, `${d.text}: replayed ${late} ms from the recorded time`);
  });
  t.equal(result.extraModelCalls, 0, 'every call of the replay had its recorded answer');
  // The run's second tick was woken by the body's status arriving during its first; the replay's first
  // tick is that status's own, so one idle answer has no call: reported, never given to the next tick.
  t.equal(result.missedModelCalls, 1, "the run's extra idle answer is reported, not shifted onto a typed line's tick");
});
