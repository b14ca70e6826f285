// Proves the tree is driven by events: no snapshot reads outside the CLI's read-only views, no state names, no module-level mutable state or logic, no XState internals read in the production source.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..', '..');
const PRODUCTION = ['cli', 'src', 'actors', 'devices'];

type Rule = 'getSnapshot' | 'state-name' | 'module-let' | 'module-mutable' | 'xstate-internal';

interface Finding {
  rule: Rule;
  file: string;
  line: number;
  /** The nearest named declaration around it (function, method, class, variable): what the allowlist names. */
  where: string;
  text: string;
}

/**
 * The findings we accept, each with why. Keyed `rule file where`; an entry that no longer matches
 * anything fails too, so the list only shrinks with the code.
 */
const ALLOWED: Record<string, string> = {
  // Read-only views an actor offers of itself, read in the same turn (not a decision about another actor).
  'getSnapshot actors/actions/action.ts handleOf':
    "the action's handle is its own read-only view for the tick and hooks (live, busy, queue length); commands still go as events",
  // Memoised loads and pure caches: they hold what the code or the machine is, never what an actor decided.
  'module-let src/vision/opencv.ts loading': 'the native OpenCV module, loaded once per process on first use (a native addon cannot be loaded twice)',
  'module-let src/vision/opencv.ts loaded': 'the native OpenCV module, loaded once per process on first use',
  'module-let src/pipelines/voice-gate.ts fvad':
    'the voice-activity WebAssembly module while detectors use it, shared by them and dropped with the last (its 16 MB memory is not kept after a mode stops listening)',
  'module-let src/systemd/notify.ts cachedDgram': 'the optional unix datagram addon, loaded once per process on first use',
  'module-let src/service/backends/tts.ts voices': 'the espeak-ng voices installed on this machine, listed once',
  'module-let actors/fleet/fleet.ts version': "the runtime's version from package.json, read once",
  'module-mutable src/plugins/args.ts entryArgs':
    "a memo of a pure function (an entry's config block to the zod arguments it declares) keyed by the immutable block",
  'module-mutable src/cortex/tools.ts converted': "a memo of a pure function (an action's zod schema to JSON Schema) keyed by the immutable schema",
  'module-mutable src/redact.ts verdicts': 'a memo of a pure function (a field name to whether it names a secret), bounded to 4,096 names',
  'module-mutable devices/camera-sim.ts backgrounds': 'a memo of drawn backgrounds per size (pure pixels), keyed by the OpenCV module',
  'module-mutable src/config/issues.ts OPEN_OBJECTS':
    'marks schema objects as open while the schema modules load (like a symbol on the schema); read only after',
  'module-mutable src/service/context.ts verifiedKeys': 'per-request data keyed by the request object, freed with it (a fastify decoration would do the same)',
  // Process-wide by nature.
  'module-let src/local-peer.ts ownAddresses': "this machine's own addresses, re-read at most once a second, shared by every server of the process",
  'module-let src/local-peer.ts timer': "the one pending read of the kernel's socket tables, shared by every server of the process",
  'module-mutable src/local-peer.ts tables':
    "the kernel's socket tables (/proc/net/tcp, tcp6), read at most ten times a second for every server of the process",
  'module-mutable src/local-peer.ts waiting': 'connections waiting for the next read of the socket tables (at most 256), shared by every server of the process',
  'module-let devices/dds/addon.ts loaded': 'the native DDS addon, loaded once per process on first use (a native addon cannot be loaded twice)',
  'module-mutable devices/dds/body.ts bodies':
    "one DDS link per robot, shared by the agents of a process (a reload keeps the robot's link), as serial.ts's sharedLines",
  'module-mutable devices/dds/types.ts extra': "message definitions added once (Unitree's types) to Foxglove's common set, only read after",
  'module-mutable devices/dds/types.ts codecs': 'a memo of a pure function (a message type name to its CDR codec)',
  'module-let src/log.ts root': "the process's one root logger (pino destinations are per process), set by the CLI before anything runs",
  'module-mutable devices/serial.ts sharedLines':
    'a serial port can be opened once per process: the line (its one open port) by path, shared by connectors, a battery board and the e-stop watcher',
  'module-mutable actors/inputs/text-input.ts holders':
    'a unix socket path is a process-wide resource: a new server at a path waits for the close of the previous one',
  'module-mutable src/plugins/actions.ts actionDescriptors': 'the built-in descriptor table, filled where it is declared and only read after',
  'module-mutable src/plugins/inputs.ts inputDescriptors': 'the built-in descriptor table, filled where it is declared and only read after',
  'module-mutable src/plugins/llms.ts llmDescriptors': 'the built-in descriptor table, filled where it is declared and only read after',
  'module-mutable src/plugins/simulators.ts simulatorDescriptors': 'the built-in descriptor table, filled where it is declared and only read after',
  'module-let actors/actions/action.ts nextCommandId':
    'command ids unique in the process: a hook and the tick hold separate handles of one action, and cancel by id',
};

/** The WebSim page is a browser program of its own: its module scope is the page's lifetime. */
const BROWSER = 'src/websim/page/';

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (/\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

/** The CLI's read-only views may read snapshots (they show the tree; they drive nothing). */
const readOnlyView = (file: string) => /^cli\/(view|view-parts|view-streams|graph)\.ts$/.test(file) || file.startsWith('src/websim/page/');

/** Classes whose instances made at module level hold no state that changes. */
const STATELESS = new Set(['Intl', 'RegExp', 'TextEncoder', 'TextDecoder', 'URL', 'Error', 'TypeError', 'RangeError']);

const MUTATORS = new Set(['set', 'add', 'delete', 'clear', 'push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill', 'copyWithin']);

/** Where a node is, as a reader names it: its top-level declaration, `Class.member` inside a class. */
function enclosing(node: ts.Node): string {
  let member: string | undefined;
  for (let n: ts.Node = node; n.parent; n = n.parent) {
    if (ts.isClassElement(n) && n.parent && ts.isClassLike(n.parent)) member = n.name && ts.isIdentifier(n.name) ? n.name.text : 'constructor';
    if (!ts.isSourceFile(n.parent)) continue;
    const top =
      ts.isVariableStatement(n) && ts.isIdentifier(n.declarationList.declarations[0]!.name)
        ? n.declarationList.declarations[0]!.name.text
        : (ts.isFunctionDeclaration(n) || ts.isClassDeclaration(n)) && n.name
          ? n.name.text
          : '(module)';
    return member && ts.isClassDeclaration(n) ? `${top}.${member}` : top;
  }
  return '(module)';
}

/** Is `e` a snapshot: `x.getSnapshot()`, or a name that says it is one (`snap`, `snapshot`, `state`)? */
function snapshotLike(e: ts.Expression): boolean {
  if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && e.expression.name.text === 'getSnapshot') return true;
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) return snapshotLike(e.expression);
  return ts.isIdentifier(e) && /^(snap|snapshot|state|s)$|Snap(shot)?$|^snap/i.test(e.text);
}

/** `self.getSnapshot().context` / `.status`: an actor reading its own data (not its children). */
function ownData(call: ts.CallExpression): boolean {
  const receiver = (call.expression as ts.PropertyAccessExpression).expression;
  const parent = call.parent;
  return ts.isIdentifier(receiver) && receiver.text === 'self' && ts.isPropertyAccessExpression(parent) && /^(context|status)$/.test(parent.name.text);
}

/** The identifier at the root of `a.b[c].d`. */
function rootName(e: ts.Expression): string | undefined {
  while (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) e = e.expression;
  return ts.isIdentifier(e) ? e.text : undefined;
}

/** Every finding of one source file. */
export function findingsOf(file: string, text: string): Finding[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out: Finding[] = [];
  const add = (rule: Rule, node: ts.Node, where = enclosing(node)) =>
    out.push({
      rule,
      file,
      line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      where,
      text: node.getText().split('\n')[0]!.slice(0, 120),
    });

  // Module-level state: `let`/`var` at the top, and top-level collections the file mutates.
  const collections = new Map<string, ts.Node>();
  for (const statement of source.statements) {
    const decl = ts.isVariableStatement(statement) ? statement : undefined;
    if (!decl) continue;
    const flags = decl.declarationList.flags;
    if (!(flags & ts.NodeFlags.Const)) {
      for (const d of decl.declarationList.declarations) add('module-let', d, d.name.getText());
      continue;
    }
    for (const d of decl.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || !d.initializer) continue;
      let init: ts.Expression = d.initializer;
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init)) init = init.expression;
      const collection =
        (ts.isNewExpression(init) && ts.isIdentifier(init.expression) && /^(Map|Set|WeakMap|WeakSet|Array)$/.test(init.expression.text)) ||
        ts.isArrayLiteralExpression(init) ||
        ts.isObjectLiteralExpression(init);
      if (collection) collections.set(d.name.text, d);
      // A logic made at load time (`streamSessionLogic()`) keeps its actors' services for the whole process: logics are made by their owner.
      else if (ts.isCallExpression(init) && /Logic$/.test(rootName(init.expression) ?? '')) add('module-mutable', d, d.name.text);
      // Any other instance made at load time holds state of its own (a gate, a registry): one per process.
      else if (ts.isNewExpression(init) && !STATELESS.has(rootName(init.expression) ?? '')) add('module-mutable', d, d.name.text);
    }
  }

  const mutated = new Set<string>();
  const visit = (node: ts.Node): void => {
    // `actor.options.input`: XState keeps it on the actor but does not document it; services reach actors through their logic (ActorServices).
    if (
      ts.isPropertyAccessExpression(node) &&
      node.name.text === 'input' &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'options'
    )
      add('xstate-internal', node);
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      if (method === 'getSnapshot' && !readOnlyView(file) && !ownData(node)) add('getSnapshot', node);
      if (method === 'matches' && snapshotLike(node.expression.expression)) add('state-name', node);
      const target = node.expression.expression;
      if (MUTATORS.has(method) && ts.isIdentifier(target) && collections.has(target.text)) mutated.add(target.text);
    }
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      const comparison =
        op === ts.SyntaxKind.EqualsEqualsEqualsToken ||
        op === ts.SyntaxKind.ExclamationEqualsEqualsToken ||
        op === ts.SyntaxKind.EqualsEqualsToken ||
        op === ts.SyntaxKind.ExclamationEqualsToken;
      const stateValue = (e: ts.Expression) => ts.isPropertyAccessExpression(e) && e.name.text === 'value' && snapshotLike(e.expression);
      if (comparison && (stateValue(node.left) || stateValue(node.right))) add('state-name', node);
      const assigning = op >= ts.SyntaxKind.FirstAssignment && op <= ts.SyntaxKind.LastAssignment;
      if (assigning && (ts.isPropertyAccessExpression(node.left) || ts.isElementAccessExpression(node.left))) {
        const name = rootName(node.left);
        if (name && collections.has(name)) mutated.add(name);
      }
    }
    if (
      (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
      (ts.isPropertyAccessExpression(node.operand) || ts.isElementAccessExpression(node.operand))
    ) {
      const name = rootName(node.operand);
      if (name && collections.has(name)) mutated.add(name);
    }
    if (
      ts.isSwitchStatement(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'value' &&
      snapshotLike(node.expression.expression)
    ) {
      add('state-name', node.expression);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const name of mutated) {
    const decl = collections.get(name)!;
    // A local shadowing the module name would be a false finding; none of ours do, and the allowlist is the escape.
    add('module-mutable', decl, name);
  }
  return out;
}

const key = (f: Finding) => `${f.rule} ${f.file} ${f.where}`;

t.test('the scanner sees snapshot reads, state names and module-level mutable state', async (t) => {
  const text = [
    'let counter = 0;',
    'const cache = new Map<string, number>();',
    'const fixed = new Set([1, 2]);',
    'const list: string[] = [];',
    'const frozen = Object.freeze({ a: 1 });',
    'export function f(ref: any) {',
    '  const snap = ref.getSnapshot();',
    "  if (snap.value === 'connecting') cache.set('a', 1);",
    "  if (ref.getSnapshot().matches('idle')) list.push('x');",
    '  const own = (self: any) => self.getSnapshot().context;',
    "  return fixed.has(1) && snap.hasTag('running') && own(ref);",
    '}',
    'const shared = sessionLogic();',
    'const inputOf = (self: any) => self.options?.input;',
  ].join('\n');
  const found = findingsOf('actors/x.ts', text).map((f) => `${f.rule} ${f.where} ${f.line}`);
  t.same(found.sort(), [
    'getSnapshot f 7',
    'getSnapshot f 9',
    'module-let counter 1',
    'module-mutable cache 2',
    'module-mutable list 4',
    'module-mutable shared 13',
    'state-name f 8',
    'state-name f 9',
    'xstate-internal inputOf 14',
  ]);
  t.same(findingsOf('cli/view.ts', 'export const v = (r: any) => r.getSnapshot().context;'), [], 'the read-only views may read snapshots');
});

t.test('the production source drives the tree by events and keeps no module-level mutable state', async (t) => {
  const findings = PRODUCTION.flatMap(sources)
    .filter((file) => !file.startsWith(BROWSER))
    .flatMap((file) => findingsOf(file, readFileSync(join(ROOT, file), 'utf8')));
  const unexpected = findings.filter((f) => !(key(f) in ALLOWED));
  t.same(
    unexpected.map((f) => `${f.file}:${f.line} ${f.rule} in ${f.where}: ${f.text}`),
    [],
    'no getSnapshot() outside the read-only views, no `.value ===` on a snapshot, no module-level mutable state or logic, no `options.input`',
  );
  const used = new Set(findings.map(key));
  t.same(
    Object.keys(ALLOWED).filter((k) => !used.has(k)),
    [],
    'every allowlist entry still matches something (remove the ones the code no longer needs)',
  );
});
