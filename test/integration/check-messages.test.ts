// `cortexd check` on a table of broken files (misspelt keys at every level, the common JSON5 slips): each message has the line it is about and the fix.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAIN } from '../helpers/agent-process.js';
import { requireBuild } from '../helpers/requires.js';

requireBuild();
const ROOT = join(import.meta.dirname, '..', '..');
const BASE = readFileSync(join(ROOT, 'config', 'default.json5'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'cortexd-check-msg-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** A slip made by hand: `from` (its first use outside comments) written as `to`; the problem is on the line of `from` unless `line` says another. */
interface Slip {
  what: string;
  from: string;
  to: string;
  fix: RegExp;
  /** The line of the message, relative to the slip's line (a comma missing is said where the entry before ends). */
  lineOffset?: number;
}

const SLIPS: Slip[] = [
  {
    what: 'a misspelt top-level key',
    from: 'default_mode: "idle"',
    to: 'defualt_mode: "idle"',
    fix: /defualt_mode: unknown field; did you mean "default_mode"\? \(rename it: default_mode is required and missing/,
  },
  {
    what: "a misspelt mode key (QUICKSTART's first edit)",
    from: 'system_prompt_base: "Your name is Pip. You are a small',
    to: 'system_prompt_bse: "Your name is Pip. You are a small',
    fix: /modes\.idle\.system_prompt_bse: unknown field; did you mean "system_prompt_base"\? \(rename it: system_prompt_base is required and missing/,
  },
  {
    what: 'a misspelt action key',
    from: 'llm_label: "speak"',
    to: 'llm_lable: "speak"',
    fix: /modes\.idle\.agent_actions\[0\]\.llm_lable: unknown field; did you mean "llm_label"\?/,
  },
  {
    what: "a misspelt key of a plugin's config",
    from: 'descriptor: "Voice (typed)"',
    to: 'descriptr: "Voice (typed)"',
    fix: /modes\.idle\.agent_inputs\[0\]\.config\.descriptr: unknown field; did you mean "descriptor"\?/,
  },
  {
    what: 'a misspelt hook key',
    from: 'handler_config: { message: "I\'m resting',
    to: 'handler_confg: { message: "I\'m resting',
    fix: /lifecycle_hooks\[0\]\.handler_confg: unknown field; did you mean "handler_config"\?/,
  },
  {
    what: 'a misspelt key of the service block',
    from: 'asr_ws_url: "embedded"',
    to: 'asr_url: "embedded"',
    fix: /service\.asr_url: unknown field; did you mean "asr_ws_url"\?/,
  },
  {
    what: 'a missing closing quote',
    from: 'display_name: "Idle",',
    to: 'display_name: "Idle,',
    fix: /the text in quotes that starts here is not closed: add the closing " at its end/,
  },
  { what: 'a missing comma', from: 'display_name: "Idle",', to: 'display_name: "Idle"', fix: /a comma is missing at the end of line \d+/ },
  { what: 'a missing colon', from: 'hertz: 0.5,', to: 'hertz 0.5,', fix: /a colon is missing after the key hertz: write key: value/ },
  {
    what: 'a missing closing brace',
    from: 'simulators: [{ type: "WebSim" }],',
    to: 'simulators: [{ type: "WebSim" ],',
    fix: /the \{ \(an object\) that opens here is closed by a \]: add its \} before that/,
  },
];

/** The 1-based line of the first use of `s` outside a comment line. */
function lineOf(text: string, s: string): number {
  const i = text.split('\n').findIndex((l) => l.includes(s) && !l.trim().startsWith('//'));
  if (i < 0) throw new Error(`${s} is not in config/default.json5: update this table`);
  return i + 1;
}

for (const slip of SLIPS) {
  t.test(`${slip.what}: the line and the fix`, async (t) => {
    const line = lineOf(BASE, slip.from);
    const lines = BASE.split('\n');
    lines[line - 1] = lines[line - 1]!.replace(slip.from, slip.to);
    const file = join(dir, `${slip.what.replace(/\W+/g, '_')}.json5`);
    writeFileSync(file, lines.join('\n'));
    const r = spawnSync(process.execPath, [MAIN, 'check', '--config', file], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 30_000 });
    t.equal(r.status, 2, 'the check fails');
    const problems = r.stdout.split('\n').filter((l) => l.startsWith(file));
    t.equal(problems.length, 1, `one problem, not one per symptom: ${problems.join(' | ')}`);
    const m = /^[^:]+:(\d+):(\d+): (.*)$/.exec(problems[0] ?? '');
    t.ok(m, `file:line:column: ${problems[0]}`);
    t.equal(Number(m?.[1]), line + (slip.lineOffset ?? 0), 'the line of the slip');
    t.match(m?.[3], slip.fix, 'and the fix in plain words');
    t.notMatch(r.stdout + r.stderr, /\n\s+at /, 'no stack trace');
  });
}

t.test('a file cut short: the brace never closed is named with its line', async (t) => {
  const file = join(dir, 'cut.json5');
  const cut = BASE.slice(0, BASE.indexOf('  transition_rules'));
  writeFileSync(file, cut);
  const r = spawnSync(process.execPath, [MAIN, 'check', '--config', file], { encoding: 'utf8', timeout: 30_000 });
  t.equal(r.status, 2);
  t.match(
    r.stdout,
    new RegExp(
      `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${lineOf(BASE, '{')}:1: the \\{ \\(an object\\) that opens here is never closed: add a \\} where it ends`,
      'm',
    ),
  );
});
