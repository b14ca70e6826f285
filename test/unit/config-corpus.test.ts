// Proves every OM1 reference configuration, read natively (without --om1), is refused without a crash: OM1's plugin names as unknown types, OM1's fields as unknown fields, nothing kept silently.
import t from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { UNKNOWN_FIELD, UNKNOWN_PLUGIN_FIELD } from '../../src/config/load.js';

/** The corpus sits beside the clone, as in CI: `../shared/reference/om1-configs`. */
const CORPUS = resolve(projectRoot(), '..', 'shared', 'reference', 'om1-configs');
const EXPECTED_FILES = 37;

/** Files with real format problems, and exactly the non-unknown-type problems each must report. */
const BAD_URID = 'URID: not a valid URID "om1_qwertyui": expected a two-letter prefix and 12 letters or digits (14 characters), for example "OM1A2B3C4D5E6F"';
const EXPECTED_PROBLEMS: Record<string, string[]> = {
  'unitree_go2_mapper.json5': [BAD_URID],
  'unitree_go2_mapper_bits.json5': [BAD_URID],
  'unitree_go2_mapper_bits_ai.json5': [BAD_URID],
};

t.ok(existsSync(CORPUS), `corpus directory ${CORPUS} exists`);
const files = existsSync(CORPUS)
  ? readdirSync(CORPUS)
      .filter((f) => f.endsWith('.json5'))
      .sort()
  : [];
t.equal(files.length, EXPECTED_FILES, `the corpus has ${EXPECTED_FILES} configurations`);
for (const name of Object.keys(EXPECTED_PROBLEMS)) t.ok(files.includes(name), `${name} is in the corpus`);

for (const name of files) {
  t.test(name, async (t) => {
    // A fixed, empty environment: results must not depend on the machine's variables.
    let result: { ok: true } | { ok: false; err: ConfigError };
    try {
      await loadConfig({ file: join(CORPUS, name) }, { env: {} });
      result = { ok: true };
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err; // a crash fails the test with its stack
      result = { ok: false, err };
    }
    t.notOk(result.ok, "OM1 names are not this runtime's: the file needs --om1");
    if (result.ok) return;
    const { issues } = result.err;
    t.ok(
      issues.some((i) => i.kind === 'unknown_type'),
      "at least one of OM1's plugin names is reported",
    );
    const other = issues
      .filter((i) => i.kind !== 'unknown_type' && i.message !== UNKNOWN_FIELD && i.message !== UNKNOWN_PLUGIN_FIELD)
      .map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
    t.same(other, EXPECTED_PROBLEMS[name] ?? [], 'only unknown plugin types and unknown fields, apart from the listed format problems');
    for (const issue of issues.filter((i) => i.kind === 'unknown_type')) {
      t.match(issue.path, /(^|\.)(type|name|connector)$/, 'unknown types are reported at the type field');
      t.match(issue.message, /^unknown (input|action|connector|llm|simulator) type ".+"; known: .+$/);
    }
  });
}

t.test('without plugin resolution, the problems are OM1 fields this runtime does not carry out and the listed ones', async (t) => {
  for (const name of files) {
    try {
      await loadConfig({ file: join(CORPUS, name) }, { env: {}, plugins: false });
      t.notOk(EXPECTED_PROBLEMS[name], `${name} loads`);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const unknown = err.issues.filter((i) => i.message === UNKNOWN_FIELD).map((i) => i.path.replace(/^modes\.[^.]+\./, '').replace(/\[\d+\]/g, '[]'));
      for (const path of unknown)
        t.match(
          path,
          /^(backgrounds|action_execution_mode|unitree_ethernet|robot_ip|knowledge_base|lifecycle_hooks\[\]\.handler_config\.\w+)$/,
          `${name}: ${path} is an OM1 field`,
        );
      t.same(
        err.issues.filter((i) => i.message !== UNKNOWN_FIELD).map((i) => `${i.path}: ${i.message}`),
        EXPECTED_PROBLEMS[name] ?? [],
        name,
      );
    }
  }
});
