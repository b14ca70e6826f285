// WarmEspeak replaces a taken process on the next turn of the event loop (not inside the caller's turn), and close() stops the replacement that has not started yet.
import t, { type Test } from 'tap';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WarmEspeak } from '../../src/warm-espeak.js';

/** A stand-in program for espeak-ng that notes each start in `dir` and reads its stdin to the end. */
function recorder(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-warm-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const program = join(dir, 'fake-espeak');
  writeFileSync(program, `#!/bin/sh\ntouch "${dir}/started.$$"\ncat > /dev/null\n`);
  chmodSync(program, 0o755);
  const starts = () => readdirSync(dir).filter((f) => f.startsWith('started.')).length;
  return { program, starts };
}

/** This process's child processes, as the kernel lists them (a spawn shows at once). */
const children = () =>
  readdirSync('/proc/self/task').flatMap((task) => readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));

const turn = () => new Promise((resolve) => setImmediate(resolve));
const until = async (ok: () => boolean) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

t.test('a taken process is replaced on the next turn of the event loop', async (t) => {
  const r = recorder(t);
  const warm = new WarmEspeak({ command: r.program });
  t.teardown(() => warm.close());
  const before = children().length;
  const child = warm.take('en', 160);
  t.equal(children().length, before + 1, 'one process started in the caller turn: the taken one');
  child.stdin?.end();
  await turn();
  await until(() => r.starts() >= 2);
  t.equal(r.starts(), 2, 'the replacement started on the next turn');
  const next = warm.take('en', 160);
  t.not(next.pid, child.pid, 'the next take gets the replacement');
  next.stdin?.end();
});

t.test('close() before the next turn: no replacement starts', async (t) => {
  const r = recorder(t);
  const warm = new WarmEspeak({ command: r.program });
  const before = children().length;
  const child = warm.take('en', 160);
  warm.close();
  t.equal(children().length, before + 1, 'the taken process only');
  child.stdin?.end();
  await new Promise((resolve) => child.once('exit', resolve));
  await turn();
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(r.starts(), 1, 'only the taken process ever started');
});
