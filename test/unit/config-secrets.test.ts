// Proves configuration problems never echo a secret: a ${VAR} value in a wrong field, OM_API_KEY, URID, and key-shaped strings in the file.
import t from 'tap';
import { formatIssue } from '../../src/errors.js';
import { concealValue, looksLikeSecret } from '../../src/config/conceal.js';
import { mode, tempDir, tryLoad, validConfig, writeConfig } from '../helpers/config-fixtures.js';

const SECRET = 'Qx7pLm2NvR4tW9zK3bHc8dFg5jYs6aEu';
const KEY = `key_live_AbCdEf123456${SECRET}`;

/** Every 6-character piece of the secret part: none of them may appear in anything the user sees. */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i + 6 <= SECRET.length; i++) if (text.includes(SECRET.slice(i, i + 6))) found.push(SECRET.slice(i, i + 6));
  return found;
}

/** Loads with plugins checked, as `cortexd check` does, and returns what it would print. */
async function printed(t: { teardown: (fn: () => void) => void }, config: Record<string, unknown>, env: Record<string, string>) {
  const dir = tempDir(t);
  const r = await tryLoad(writeConfig(dir, 'bot', config), { plugins: true, env });
  const lines = r.ok ? r.warnings : [...r.warnings, ...r.issues.map(formatIssue)];
  return { ok: r.ok, text: lines.join('\n') };
}

t.test('${OM_API_KEY} in a wrong field is named, never shown', async (t) => {
  const env = { OM_API_KEY: KEY };
  const wrongPlaces: Record<string, Record<string, unknown>> = {
    hertz: validConfig({ modes: { guard: mode({ hertz: '${OM_API_KEY}' }), rest: mode() } }),
    provider: validConfig({ cortex_llm: { type: 'CloudLLM', config: { provider: '${OM_API_KEY}' } } }),
    model: validConfig({ cortex_llm: { type: 'CloudLLM', config: { model: '${OM_API_KEY}' } } }),
    default_mode: validConfig({ default_mode: '${OM_API_KEY}' }),
    URID: validConfig({ URID: '${OM_API_KEY}' }),
    'input type': validConfig({ modes: { guard: mode({ agent_inputs: [{ type: '${OM_API_KEY}' }] }), rest: mode() } }),
    'llm type': validConfig({ cortex_llm: { type: '${OM_API_KEY}' } }),
    version: validConfig({ version: '${OM_API_KEY}' }),
    'inside a longer string': validConfig({ default_mode: 'mode-${OM_API_KEY}-x' }),
  };
  for (const [where, config] of Object.entries(wrongPlaces)) {
    const { ok, text } = await printed(t, config, env);
    t.notOk(ok, `${where}: the configuration is refused`);
    t.same(leaks(text), [], `${where}: no piece of the key is printed`);
    t.match(text, /\$\{OM_API_KEY\}/, `${where}: the problem names the variable`);
  }
  const { text } = await printed(t, validConfig({ modes: { guard: mode({ hertz: '${OM_API_KEY}' }), rest: mode() } }), env);
  t.match(text, 'modes.guard.hertz: expected a number, got the value of ${OM_API_KEY} (not shown)');
});

t.test('URID from the environment and other variables are not echoed either', async (t) => {
  const { text } = await printed(t, validConfig(), { URID: `om${SECRET}` });
  t.same(leaks(text), []);
  t.match(text, 'URID (from the URID variable): not a valid URID the value of ${URID} (not shown)');
  const other = await printed(t, validConfig({ modes: { guard: mode({ hertz: '${RATE}' }), rest: mode() } }), { RATE: 'fast' });
  t.match(other.text, 'modes.guard.hertz: expected a number, got the value of ${RATE} (not shown)');
  t.notMatch(other.text, '"fast"');
});

t.test('key-shaped strings written in the file are never quoted back', async (t) => {
  for (const value of [KEY, `sk-${SECRET}`, SECRET, 'ab12'.repeat(10)]) {
    const { ok, text } = await printed(t, validConfig({ modes: { guard: mode({ hertz: value }), rest: mode() } }), {});
    t.notOk(ok);
    t.same(leaks(text), [], value.slice(0, 12));
  }
  // Ordinary wrong values are still shown: they help and hold no secret.
  const plain = await printed(t, validConfig({ modes: { guard: mode({ hertz: 'fast' }), rest: mode() } }), {});
  t.match(plain.text, 'modes.guard.hertz: expected a number, got "fast"');
});

t.test('conceal: whole, quoted, JSON-escaped and cut-short echoes', async (t) => {
  const label = 'the value of ${X} (not shown)';
  t.equal(concealValue('got "abcdefgh", bad', 'abcdefgh', label), `got ${label}, bad`);
  t.equal(concealValue('got "abcd...", bad', 'abcdefgh', label), `got ${label}, bad`);
  t.equal(concealValue('x abcdefgh y', 'abcdefgh', label), `x ${label} y`);
  t.equal(concealValue('abcd is not abcdefgh', 'abcdefgh', label), `abcd is not ${label}`, 'a shared prefix alone is not an echo');
  t.equal(concealValue('rules[1]: got "1"', '1', label), `rules[1]: got ${label}`, 'short values only where quoted');
  t.ok(looksLikeSecret(KEY) && looksLikeSecret(SECRET) && looksLikeSecret('0123456789abcdef0123456789abcdef'));
  t.notOk(looksLikeSecret('exploration_mode_version_2') || looksLikeSecret('fast') || looksLikeSecret('http://127.0.0.1:8420'));
});

t.test('plugin type names made of words are shown; random tokens are not', async (t) => {
  for (const name of ['UnitreeGo2LidarLocalization', 'UnitreeGo2FrontierExploration', 'SpeechlabASRInput2Channels'])
    t.notOk(looksLikeSecret(name), `${name} is shown`);
  for (const token of ['Zq9Xk2Lp7Qw3Er5Ty8Ui1Op4', 'a8F3kL9qZ2mN7xP4vB6wR1tY', `tok_${'Ab3'.repeat(8)}`]) t.ok(looksLikeSecret(token), `${token} is concealed`);
});
