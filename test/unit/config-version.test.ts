// Proves the version rules (v1.0.0-v1.0.5 silent, newer v1.x one warning, other majors refused) and the URID rules.
import t from 'tap';
import { checkUrid } from '../../src/config/urid.js';
import { loadObject, validConfig } from '../helpers/config-fixtures.js';

const READS = 'this runtime reads v1.0.0 to v1.0.5';

t.test('v1.0.0 to v1.0.5 load without a warning', async (t) => {
  for (const version of ['v1.0.0', 'v1.0.1', 'v1.0.2', 'v1.0.3', 'v1.0.4', 'v1.0.5']) {
    const r = await loadObject(t, validConfig({ version }));
    t.ok(r.ok, version);
    t.same(r.warnings, [], `${version}: silent`);
  }
});

t.test('a newer minor or patch of v1 loads with exactly one warning', async (t) => {
  for (const version of ['v1.0.6', 'v1.1.0', 'v1.12.3']) {
    const r = await loadObject(t, validConfig({ version }));
    t.ok(r.ok, version);
    t.equal(r.warnings.length, 1, `${version}: one warning`);
    t.match(
      r.warnings[0],
      new RegExp(`version: version ${version.replace(/\./g, '\\.')} is newer than this runtime knows \\(${READS}\\); loading it as v1\\.0\\.5`),
    );
  }
});

t.test('another major version is refused and checking stops there', async (t) => {
  for (const version of ['v2.0.0', 'v0.9.1', 'v10.0.0']) {
    // Everything else in the file is wrong too: only the version is reported.
    const r = await loadObject(t, { version, modes: 'not modes', hertz: 'fast' });
    t.same(!r.ok && r.lines, [`version: unsupported version ${version}: ${READS} (and newer v1.x with a warning)`], version);
    t.equal(!r.ok && r.issues[0]!.kind, 'version');
  }
});

t.test('a missing or malformed version is an error saying which versions are read; other problems still listed', async (t) => {
  const missing = validConfig({ hertz: 'fast' });
  delete missing.version;
  const r = await loadObject(t, missing);
  t.notOk(r.ok);
  if (!r.ok) {
    t.ok(r.lines.includes(`version: required; ${READS}, for example version: "v1.0.5"`));
    t.ok(r.lines.includes('hertz: expected a number, got "fast"'), 'the rest of the file is still checked');
  }
  for (const [version, expect] of [
    ['1.0.5', `version: malformed version "1.0.5": expected vMAJOR.MINOR.PATCH; ${READS}`],
    ['v1.0', `version: malformed version "v1.0": expected vMAJOR.MINOR.PATCH; ${READS}`],
    ['latest', `version: malformed version "latest": expected vMAJOR.MINOR.PATCH; ${READS}`],
    [105, `version: expected a string such as "v1.0.5", got 105; ${READS}`],
  ] as const) {
    const bad = await loadObject(t, validConfig({ version }));
    t.ok(!bad.ok && bad.lines.includes(expect), String(version));
  }
});

t.test('URID: two letters and 12 letters or digits, any case, normalised to upper case', async (t) => {
  t.same(checkUrid('om1a2b3c4d5e6f'), { ok: true, urid: 'OM1A2B3C4D5E6F' });
  t.same(checkUrid('Ab123456789XYZ'), { ok: true, urid: 'AB123456789XYZ' });
  t.same(checkUrid('ZZ000000000000'), { ok: true, urid: 'ZZ000000000000' }, 'any two-letter prefix');
  t.same(checkUrid(''), { ok: true, urid: undefined }, "'' means none");
  t.same(checkUrid('default'), { ok: true, urid: undefined }, "'default' means none");
  t.same(checkUrid(undefined), { ok: true, urid: undefined });
  for (const bad of ['om1_qwertyui', '1M1A2B3C4D5E6F', 'OM1A2B3C4D5E6', 'OM1A2B3C4D5E6FG', 'OM1A2B3C4D5E6-', 'ÖM1A2B3C4D5E6F']) {
    const r = checkUrid(bad);
    t.notOk(r.ok, bad);
  }
});

t.test('URID from the file or the URID variable; a bad one is an error at URID', async (t) => {
  const fromFile = await loadObject(t, validConfig({ URID: 'om1a2b3c4d5e6f' }), { env: { URID: 'XX000000000000' } });
  t.equal(fromFile.ok && fromFile.loaded.urid, 'OM1A2B3C4D5E6F', 'the file wins over the variable');
  const fromEnv = await loadObject(t, validConfig(), { env: { URID: 'rb0123456789ab' } });
  t.equal(fromEnv.ok && fromEnv.loaded.urid, 'RB0123456789AB');
  const none = await loadObject(t, validConfig({ URID: 'default' }));
  t.equal(none.ok && none.loaded.urid, undefined);

  const bad = await loadObject(t, validConfig({ URID: 'om1_qwertyui' }));
  t.same(!bad.ok && bad.lines, [
    'URID: not a valid URID "om1_qwertyui": expected a two-letter prefix and 12 letters or digits (14 characters), for example "OM1A2B3C4D5E6F"',
  ]);
  const badEnv = await loadObject(t, validConfig(), { env: { URID: 'short' } });
  t.match(
    !badEnv.ok && badEnv.lines,
    [/^URID \(from the URID variable\): not a valid URID the value of \$\{URID\} \(not shown\)/],
    'a value from a variable is never echoed',
  );
  const notString = await loadObject(t, validConfig({ URID: 12345678901234 }));
  t.same(!notString.ok && notString.lines, ['URID: expected a string, got 12345678901234'], 'one problem, not two');
});
