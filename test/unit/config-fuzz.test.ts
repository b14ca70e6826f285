// Proves `cortexd check` answers every broken configuration (320 fixed-seed mutations) with exit 2 and clear lines, never a crash or a hang.
import t from 'tap';
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkOne } from '../../cli/check.js';
import { descriptors } from '../../src/plugins/index.js';
import { mode, tempDir } from '../helpers/config-fixtures.js';

const { llms } = descriptors;

const SEED = 20260521;
const RUNS = 320;
/** "Does not hang": a generous bound per case, not a performance assertion. */
const HANG_MS = 5000;

// The checks read .env and the process environment: point them at nothing.
process.env.CORTEX_ENV_FILE = join(tempDir(t), 'no.env');
for (const k of ['OM_API_KEY', 'URID', 'CONFIG']) delete process.env[k];

/** A configuration `cortexd check` accepts (when a model plugin is registered): the base of every mutation. */
function base(): Record<string, unknown> {
  return {
    version: 'v1.0.5',
    name: 'fuzz',
    default_mode: 'guard',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: 'key_test_fuzzfuzzfuzz',
    system_governance: 'Obey.',
    service: { base_url: 'embedded' },
    cortex_llm: { type: llms.names()[0]! },
    modes: { guard: mode({ timeout_seconds: 30 }), rest: mode({ display_name: 'Rest' }) },
    transition_rules: [
      { from_mode: 'guard', to_mode: 'rest', transition_type: 'input_triggered', trigger_keywords: ['rest'], priority: 1 },
      { from_mode: '*', to_mode: 'guard', transition_type: 'manual', priority: 0 },
    ],
    global_lifecycle_hooks: [{ hook_type: 'on_startup', handler_type: 'message', handler_config: { message: 'up' } }],
  };
}

type Path = Array<string | number>;
function setAt(obj: Record<string, unknown>, path: Path, value: unknown): Record<string, unknown> {
  let node = obj as Record<string | number, unknown>;
  for (const seg of path.slice(0, -1)) node = node[seg] as Record<string | number, unknown>;
  node[path[path.length - 1]!] = value;
  return obj;
}
function deleteAt(obj: Record<string, unknown>, path: Path): Record<string, unknown> {
  let node = obj as Record<string | number, unknown>;
  for (const seg of path.slice(0, -1)) node = node[seg] as Record<string | number, unknown>;
  delete node[path[path.length - 1]!];
  return obj;
}

/** Fields the schema requires, with what they must be. */
const REQUIRED: Array<{ path: Path; kind: 'string' | 'number' | 'boolean' | 'enum' | 'list' }> = [
  { path: ['version'], kind: 'string' },
  { path: ['default_mode'], kind: 'string' },
  { path: ['allow_manual_switching'], kind: 'boolean' },
  { path: ['mode_memory_enabled'], kind: 'boolean' },
  { path: ['api_key'], kind: 'string' },
  { path: ['system_governance'], kind: 'string' },
  { path: ['modes', 'guard', 'display_name'], kind: 'string' },
  { path: ['modes', 'guard', 'description'], kind: 'string' },
  { path: ['modes', 'guard', 'system_prompt_base'], kind: 'string' },
  { path: ['modes', 'guard', 'hertz'], kind: 'number' },
  { path: ['modes', 'rest', 'hertz'], kind: 'number' },
  { path: ['transition_rules', 0, 'from_mode'], kind: 'string' },
  { path: ['transition_rules', 0, 'to_mode'], kind: 'string' },
  { path: ['transition_rules', 0, 'transition_type'], kind: 'enum' },
  { path: ['transition_rules', 0, 'priority'], kind: 'number' },
  { path: ['global_lifecycle_hooks', 0, 'hook_type'], kind: 'enum' },
  { path: ['global_lifecycle_hooks', 0, 'handler_type'], kind: 'enum' },
];
/** Fields whose wrong type is always an error (not `version`, which is checked first with its own message). */
const TYPED = [
  ...REQUIRED,
  { path: ['modes', 'guard', 'timeout_seconds'], kind: 'number' as const },
  { path: ['modes', 'guard', 'agent_inputs'], kind: 'list' as const },
  { path: ['transition_rules', 0, 'trigger_keywords'], kind: 'list' as const },
];

const hugeString = fc.integer({ min: 10_000, max: 300_000 }).map((n) => 'x'.repeat(n));
const notString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant([1, 2]), fc.constant({ a: 1 }));
const wrongFor = (kind: string) =>
  kind === 'string'
    ? notString
    : kind === 'number'
      ? fc.oneof(fc.string(), hugeString, fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}))
      : kind === 'boolean'
        ? fc.oneof(fc.constantFrom('yes', 'true', 'false'), fc.integer(), fc.constant(null), hugeString)
        : kind === 'enum'
          ? fc.oneof(
              fc.string({ minLength: 1 }).filter((s) => !/^on_|^(message|command|function|action|input_triggered|time_based|context_aware|manual)$/.test(s)),
              hugeString,
              fc.integer(),
            )
          : fc.oneof(fc.string(), fc.integer(), fc.constant({ not: 'a list' }), hugeString);

const DEEP = 10_000;
const deepArrays = '['.repeat(DEEP) + ']'.repeat(DEEP);
const deepObjects = '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP);

/** A mutation: the text of a configuration that is invalid by construction, and what was done. */
type Mutation = { what: string; text: string };
const json = (o: Record<string, unknown>) => JSON.stringify(o, null, 1);

const mutations: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constantFrom(...TYPED).chain((f) => wrongFor(f.kind).map((v) => ({ what: `wrong type at ${f.path.join('.')}`, text: json(setAt(base(), f.path, v)) }))),
  fc.constantFrom(...REQUIRED).map((f) => ({ what: `missing ${f.path.join('.')}`, text: json(deleteAt(base(), f.path)) })),
  // A strict prefix of an object's text never closes the object.
  fc.double({ min: 0, max: 0.999, noNaN: true }).map((r) => {
    const text = json(base());
    const cut = Math.floor(r * (text.length - 1));
    return { what: `truncated at ${cut}`, text: text.slice(0, cut) };
  }),
  fc.constantFrom('} x', ',,', '}}', ' @', ' /* open comment').map((junk) => ({ what: `junk after the object: ${junk}`, text: json(base()) + junk })),
  fc
    .constantFrom<Path>(['modes', 'guard', 'hertz'], ['transition_rules', 0, 'transition_type'], ['global_lifecycle_hooks', 0, 'hook_type'])
    .chain((path) => hugeString.map((s) => ({ what: `huge string at ${path.join('.')}`, text: json(setAt(base(), path, s)) }))),
  fc
    .constantFrom<[Path, string]>(
      [['modes', 'guard', 'hertz'], deepArrays],
      [['modes', 'guard', 'agent_inputs'], deepObjects],
      [['extra_nested'], deepArrays],
      [['extra_nested'], deepObjects],
      [['modes', 'guard', 'vibe'], deepObjects],
    )
    .map(([path, deep]) => ({ what: `${DEEP} levels at ${path.join('.')}`, text: json(setAt(base(), path, '__DEEP__')).replace('"__DEEP__"', deep) })),
  fc
    .tuple(
      fc.constantFrom<Path>(['system_governance'], ['modes', 'guard', 'system_prompt_base'], ['name'], ['modes', 'rest', 'description']),
      fc.string().filter((s) => !s.includes('}') && !s.includes('$')),
    )
    .map(([path, tail]) => ({
      what: `unterminated \${ at ${path.join('.')}`,
      text: json(setAt(base(), path, `before \${${tail}`)),
    })),
  fc
    .tuple(fc.constantFrom<Path>(['system_governance'], ['api_key'], ['modes', 'guard', 'system_prompt_base']), fc.stringMatching(/^[A-Z][A-Z0-9_]{0,12}$/))
    .map(([path, v]) => ({
      what: `unset variable at ${path.join('.')}`,
      text: json(setAt(base(), path, `\${CORTEX_FUZZ_UNSET_${v}}`)),
    })),
  fc.tuple(fc.oneof(fc.integer({ min: 2, max: 999 }), fc.constant(0)), fc.nat(99), fc.nat(99)).map(([major, minor, patch]) => ({
    what: `version v${major}.${minor}.${patch}`,
    text: json(setAt(base(), ['version'], `v${major}.${minor}.${patch}`)),
  })),
  fc
    .string({ minLength: 1 })
    .filter((s) => s !== 'guard' && s !== 'rest')
    .map((m) => ({ what: `default_mode ${JSON.stringify(m)}`, text: json(setAt(base(), ['default_mode'], m)) })),
);

/** Runs checkOne with stdout and stderr captured; no tap output happens while captured. */
async function runCheck(file: string): Promise<{ code: number; out: string[]; err: string; ms: number }> {
  const outChunks: string[] = [];
  const errChunks: string[] = [];
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  process.stdout.write = ((chunk: string | Uint8Array) => (outChunks.push(String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (errChunks.push(String(chunk)), true)) as typeof process.stderr.write;
  const started = Date.now();
  let code: number;
  try {
    code = await checkOne({ file });
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
  }
  const out = outChunks
    .join('')
    .split('\n')
    .filter((l) => l !== '');
  return { code, out, err: errChunks.join(''), ms: Date.now() - started };
}

const dir = tempDir(t);

t.test('the base configuration passes check', async (t) => {
  const r = await runCheck(writeFile('base', json(base())));
  t.equal(r.code, 0, r.out.join('\n'));
  t.match(r.out[0], /^ok: .*base\.json5 \(2 modes\)$/);
});

function writeFile(name: string, text: string): string {
  const file = join(dir, `${name}.json5`);
  writeFileSync(file, text);
  return file;
}

t.test(`${RUNS} mutations: exit 2, clear lines, no stack trace, no hang`, async (t) => {
  let n = 0;
  const failures: string[] = [];
  const kinds = new Map<string, number>();
  await fc
    .assert(
      fc.asyncProperty(mutations, async (m) => {
        const file = writeFile(`case${n++ % 8}`, m.text);
        const r = await runCheck(file);
        const kind = m.what.split(' ')[0]!;
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        const problems: string[] = [];
        if (r.code !== 2) problems.push(`exit ${r.code}`);
        if (!r.out.some((l) => /^\S.*: .+/.test(l))) problems.push('no "file: path: message" line');
        if (r.out.some((l) => !/^\S.*: .+/.test(l))) problems.push('a stdout line that is not a problem line');
        if ([...r.out, r.err].some((l) => l.includes('    at '))) problems.push('stack trace');
        if (r.ms > HANG_MS) problems.push(`took ${r.ms} ms`);
        if (problems.length > 0) {
          failures.push(`${m.what}: ${problems.join(', ')}\n  stdout: ${r.out.join(' | ').slice(0, 400)}\n  stderr: ${r.err.slice(0, 400)}`);
          return false;
        }
        return true;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    .catch((err: unknown) => {
      t.fail(`${failures.join('\n')}\n${String(err).split('\n').slice(0, 3).join('\n')}`);
    });
  t.equal(n, RUNS, `${RUNS} cases ran`);
  t.same(failures, []);
  t.ok(kinds.size >= 9, `the mutations cover many kinds: ${[...kinds.keys()].join('; ')}`);
});
