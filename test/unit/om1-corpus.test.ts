// Proves each OM1 reference configuration through the compatibility layer: it loads under --om1 --simulate, or is refused with exactly its list of what is missing.
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { loadAs } from '../../src/compat/om1/load.js';
import { ConfigError } from '../../src/errors.js';

const CORPUS = resolve(projectRoot(), '..', 'shared', 'reference', 'om1-configs');
/** Per file: what `check --om1 --simulate` says (ok, or the exact problems) and what `check --om1` says of a file that simulates. */
const EXPECTED = JSON.parse(readFileSync(join(projectRoot(), 'test', 'fixtures', 'om1', 'corpus-expected.json'), 'utf8')) as Record<
  string,
  { simulate: 'ok' | string[]; real: 'ok' | string[] }
>;

async function outcome(file: string, simulate: boolean): Promise<'ok' | string[]> {
  try {
    await loadAs({ file }, { om1: true, simulate, env: {} });
    return 'ok';
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err; // a crash fails the test with its stack
    return err.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
  }
}

t.ok(existsSync(CORPUS), `corpus directory ${CORPUS} exists`);
const files = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.json5'))
  .sort();
t.same(files, Object.keys(EXPECTED).sort(), 'every corpus file has its expected outcome');

for (const name of files) {
  t.test(name, async (t) => {
    const expected = EXPECTED[name]!;
    t.same(await outcome(join(CORPUS, name), true), expected.simulate, 'check --om1 --simulate');
    t.same(await outcome(join(CORPUS, name), false), expected.real, 'check --om1 (real devices and buses)');
  });
}

// The issue's target is 24 of 37 (the rest need navigation goals, SLAM, lidar, RF mapping, OM1's Python hooks or web services: see the fixture).
t.test('at least 24 of the 37 files pass under --om1 --simulate', async (t) => {
  const passing = Object.values(EXPECTED).filter((e) => e.simulate === 'ok').length;
  t.ok(passing >= 24, `${passing} pass`);
});
