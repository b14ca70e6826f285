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

t.test("under systemd's journal (stderr is the stream JOURNAL_STREAM names): the JSON log only, every line an object journalctl keeps", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-journal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'journal.log');
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', CORTEX_STATE_DIR: join(dir, 'state'), NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '' };
  delete env.CORTEX_LOG_LEVEL;
  // systemd.exec(5): JOURNAL_STREAM is "device:inode" of the stream stdout and stderr are connected to.
  const r = spawnSync(
    'bash',
    [
      '-c',
      `: > "${file}"; export JOURNAL_STREAM=$(stat -c %d:%i "${file}"); exec "${process.execPath}" "${MAIN}" run default --simulate --fresh --for 8s --websim-port 0 < /dev/null >> "${file}" 2>&1`,
    ],
    { env, encoding: 'utf8', timeout: 120_000 },
  );
  t.equal(r.status, 0, r.stderr);
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim());
  const notJson = lines.filter((l) => {
    try {
      return typeof JSON.parse(l) !== 'object';
    } catch {
      return true;
    }
  });
  t.same(notJson, [], 'no view line: every line is a JSON object');
  const records = lines.map((l) => JSON.parse(l) as { msg?: string; level?: number | string });
  t.ok(
    records.some((r) => /^agent default started in mode idle$/.test(String(r.msg))),
    'the start is logged',
  );
  t.ok(
    records.some((r) => /^cortexd: SIMULATION \(--simulate\)/.test(String(r.msg))),
    'the first lines of a simulation are log records too',
  );
  t.ok(
    records.some((r) => r.msg === 'stopped (exit 0)'),
    'the stop is logged',
  );
  t.ok(
    records.some((r) => /typed input ended/.test(String(r.msg))),
    'the warning the view would show is a log record',
  );

  // The same variable naming another stream (a unit whose output goes elsewhere): the view, as for a file.
  const other = join(dir, 'other.log');
  const r2 = spawnSync(
    'bash',
    ['-c', `exec "${process.execPath}" "${MAIN}" run default --simulate --fresh --for 3s --websim-port 0 < /dev/null > "${other}" 2>&1`],
    { env: { ...env, JOURNAL_STREAM: '1:2' }, encoding: 'utf8', timeout: 120_000 },
  );
  t.equal(r2.status, 0, r2.stderr);
  t.match(readFileSync(other, 'utf8'), /^\d\d:\d\d:\d\d cortexd: agent default starting in mode idle/m, 'a JOURNAL_STREAM of another stream leaves the view');
});
