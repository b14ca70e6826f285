// `cortexd run > file 2>&1`, as a person keeps a run's output: the file holds the view's lines (warnings among them), never a JSON log line mixed in.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAIN } from '../helpers/agent-process.js';
import { requireBuild, requireCommands } from '../helpers/requires.js';

t.setTimeout(180_000);
requireBuild();
requireCommands(['espeak-ng']);

t.test('redirected to a file: the view only, one form of output', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-redirect-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'run.log');
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', CORTEX_STATE_DIR: join(dir, 'state'), NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '' };
  delete env.CORTEX_LOG_LEVEL;
  delete env.JOURNAL_STREAM;
  // stdin at /dev/null: the typed input ends at once, a warning of the log that the view shows as a line.
  const r = spawnSync(
    'bash',
    ['-c', `exec "${process.execPath}" "${MAIN}" run default --simulate --fresh --for 8s --websim-port 0 < /dev/null > "${file}" 2>&1`],
    {
      env,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  t.equal(r.status, 0, r.stderr);
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim());
  t.same(
    lines.filter((l) => l.trimStart().startsWith('{')),
    [],
    'no JSON log line',
  );
  t.notMatch(lines.join('\n'), /\x1b\[/, 'no colour codes in a file');
  t.ok(
    lines.some((l) => /^\d\d:\d\d:\d\d cortexd: agent default starting in mode idle/.test(l)),
    'the view is there',
  );
  t.ok(
    lines.some((l) => /^\d\d:\d\d:\d\d warning \(idle\): typed input ended \(stdin closed\)/.test(l)),
    "the log's warning is a line of the view",
  );
  t.ok(
    lines.some((l) => /^\d\d:\d\d:\d\d stopped \(exit 0\)$/.test(l)),
    'to its end',
  );
});
