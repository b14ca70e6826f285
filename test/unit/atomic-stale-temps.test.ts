// Proves that temporary files a kill -9 left beside a state file are removed when it is read at start, and that a write still in progress is left alone.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeStaleTemps } from '../../src/atomic-file.js';
import { readModeMemory } from '../../src/modes/memory.js';

t.test("a dead writer's temp file goes; a live one and other files stay", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-temps-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A real process that has ended: its pid is free (as after kill -9).
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  const file = join(dir, 'talk.json');
  const names = [`talk.json.${dead}.tmp`, `talk.json.${process.pid}.tmp`, `talk.json.1.tmp`, 'other.json.123.tmp', 'talk.json'];
  for (const n of names) writeFileSync(join(dir, n), '{');
  t.same(removeStaleTemps(file), [`talk.json.${dead}.tmp`]);
  t.notOk(existsSync(join(dir, `talk.json.${dead}.tmp`)), "the dead writer's file is gone");
  for (const n of names.slice(1)) t.ok(existsSync(join(dir, n)), `${n} stays (this process, pid 1 alive, another file, the file itself)`);
});

t.test('reading the mode memory at start cleans up after a killed writer', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-temps-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  const file = join(dir, 'companion.json');
  writeFileSync(join(dir, `companion.json.${dead}.tmp`), '{"mode":');
  readModeMemory(file);
  t.notOk(existsSync(join(dir, `companion.json.${dead}.tmp`)));
});
