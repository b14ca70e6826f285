// The house stays within its limits: long functions give a reason, each file opens with a short comment, no import circle or upward import (house.js --check).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

t.test('scripts/house.js --check passes, says so, and names the longest functions with their place, length and reason', async (t) => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/house.js'), '--check', '--json', '--top', '5'], { cwd: ROOT, encoding: 'utf8' });
  // JSON, then the summary line last (as the benches print).
  const lines = r.stdout.trim().split('\n');
  const summary = lines.at(-1) ?? '';
  t.equal(r.status, 0, `exit 0: ${summary}`);
  t.match(summary, /^house: 0 long functions without a reason, 0 first lines to fix, 0 import circles, 0 upward imports; within the limits$/);
  const report = JSON.parse(lines.slice(0, -1).join('\n')) as {
    longest: Array<{ where: string; name: string; lines: number; reason: boolean }>;
    first_lines: string[];
  };
  t.same(report.first_lines, [], 'every file opens with one short comment saying what it is');
  t.equal(report.longest.length, 5);
  for (const f of report.longest) {
    t.match(f.where, /^(cli|actors|src)\/.+\.ts:\d+$/, `${f.name} at ${f.where}`);
    t.ok(f.lines > 0);
    // Anything over the limit carries its reason: that is what --check enforces.
    if (f.lines > 80) t.ok(f.reason, `${f.name} (${f.lines} lines) gives its reason`);
  }
});
