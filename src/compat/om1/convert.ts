// Converts an OM1 configuration (as parsed) into this runtime's format, with one report line per translation and per missing part.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { MODEL_PREFIXES } from '../../cloud/catalog.js';
import type { Robot } from '../../plugins/schemas/body.js';
import { applyFormat, applyModeFormat } from './format.js';
import {
  LIDAR_TYPES,
  lidarBlock,
  type Entry,
  type Options,
  type Scope,
  type Translation,
  translateAction,
  translateBackground,
  translateInput,
  translateLlm,
  translateHook,
  translateSimulator,
} from './names.js';

export interface Om1Report {
  /** One line per translation: `PATH: OLD -> NEW (details)`. */
  translations: string[];
  /** What this runtime does not carry out, one line each (PATH: what: why / what would carry it out). */
  missing: string[];
  /** Plugins that only talk to third-party web services: unsupported on purpose, one line each. */
  unsupported: string[];
  /** Refused as OM1 refuses it (another major version), one line each. */
  refused: string[];
  /** Said as OM1 warns them (another minor version), one line each; the file still runs. */
  warnings: string[];
}

export interface Om1Conversion extends Om1Report {
  /** The native configuration (version, modes...), still with `${VAR}` references: the loader substitutes them. */
  config: Record<string, unknown>;
  /** The file asks to be simulated (`use_sim: true`), or the caller did. */
  simulate: boolean;
  /** The file asks for OM1's tracer (`use_tracer`): the run is recorded. */
  tracer: boolean;
}

/** OM1's placeholder URIDs: accepted and read as "no URID". */
const PLACEHOLDER_URIDS = new Set(['om1_qwertyui', 'default', '']);

/** Fields of a mode (or of a legacy file's top level) that name plugins. */
const MODE_PLUGIN_FIELDS = ['agent_inputs', 'agent_actions', 'backgrounds', 'agent_backgrounds', 'cortex_llm'] as const;

/** A mode's backgrounds as OM1 writes them: `agent_backgrounds` (v1.1) and the older `backgrounds`, each with its path. */
function modeBackgrounds(m: Record<string, unknown>, prefix: string): Array<{ b: Entry; path: string }> {
  return (['backgrounds', 'agent_backgrounds'] as const).flatMap((key) => asEntries(m[key]).map((b, i) => ({ b, path: `${prefix}${key}[${i}]` })));
}

const FAMILIES: Array<[RegExp, Robot, Scope['transport']]> = [
  [/UnitreeG1|unitree_g1|arm_g1/, 'unitree_g1', 'unitree_dds'],
  [/UnitreeGo2|Go2|go2_|unitree_/, 'unitree_go2', 'unitree_dds'],
  [/TurtleBot4|Turtlebot4|move_turtle/, 'turtlebot4', 'ros2_zenoh'],
  [/Tron|limx/, 'limx_tron', 'limx_sdk'],
  [/Ubtech|yanshee|ub_tts/, 'ubtech_yanshee', 'ubtech_http'],
];

/** The robot family a file is written for, from the plugin names it uses (the first family found). */
function familyOf(text: string): { robot: Robot | undefined; transport: Scope['transport'] } {
  for (const [re, robot, transport] of FAMILIES) if (re.test(text)) return { robot, transport };
  return { robot: undefined, transport: undefined };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const asEntries = (v: unknown): Entry[] => (Array.isArray(v) ? v.filter(isObject) : []);
const optionsOf = (e: Entry): Options => (isObject(e.config) ? e.config : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const describe = (o: Options) => (Object.keys(o).length ? ` ${JSON.stringify(o)}` : '');

/** What the steps of one conversion share: the file as read, the result being built, its report and the robot it is for. */
interface Conversion {
  raw: Record<string, unknown>;
  out: Record<string, unknown>;
  report: Om1Report;
  robot: Robot | undefined;
  transport: Scope['transport'];
  networkInterface: string | undefined;
  simulate: boolean;
  /** The file's backgrounds of the whole runtime, each with its path. */
  globalBackgrounds: Array<{ b: Entry; path: string }>;
  /** The file's global model once translated (it is translated at most once, by globalLlm). */
  translatedGlobal?: { value: unknown };
}

const say = (c: Conversion, path: string, line: string) => c.report.translations.push(`${path}: ${line}`);

/**
 * Converts an OM1 file. A file without `version` is OM1's oldest single-mode format: it is read as
 * v1.0.0, and a file without `modes` stays single-mode (the loader converts legacy files itself).
 * Global backgrounds run in every mode (OM1 runs them for the whole runtime: here they restart at a
 * mode switch); a mode's own backgrounds run with the mode, as in OM1.
 */
export function convertOm1(raw: Record<string, unknown>, options: { simulate?: boolean; fileName?: string; file?: string } = {}): Om1Conversion {
  const report: Om1Report = { translations: [], missing: [], unsupported: [], refused: [], warnings: [] };
  const out: Record<string, unknown> = { ...raw };
  const format = applyFormat(raw, out, options.fileName ?? 'om1');
  report.translations.push(...format.translations);
  report.missing.push(...format.missing);
  report.refused.push(...format.refused);
  report.warnings.push(...format.warnings);
  const c: Conversion = {
    raw,
    out,
    report,
    ...familyOf(JSON.stringify(raw)),
    networkInterface: typeof raw.unitree_ethernet === 'string' && raw.unitree_ethernet ? raw.unitree_ethernet : undefined,
    simulate: options.simulate === true || format.simulate,
    globalBackgrounds: globalBackgroundsOf(raw),
  };
  convertRobotFields(c);
  convertKnowledgeBase(c, options.file);
  convertMemory(c);
  convertLidar(c);
  if (isObject(raw.modes)) {
    const modes: Record<string, unknown> = {};
    for (const [name, mode] of Object.entries(raw.modes)) {
      const m = isObject(mode) ? { ...mode } : mode;
      if (isObject(m)) {
        applyModeFormat(m, name, `modes.${name}.`, report.translations);
        convertMode(c, m, `modes.${name}`);
      }
      Object.defineProperty(modes, name, { value: m, enumerable: true, writable: true, configurable: true });
    }
    out.modes = modes;
    delete out.backgrounds;
    delete out.global_backgrounds;
    delete out.agent_backgrounds;
    if (raw.cortex_llm !== undefined) {
      globalLlm(c);
      out.cortex_llm = c.translatedGlobal?.value;
    }
  } else {
    // A single-mode file: its top level is its one mode (the loader turns it into a mode).
    convertMode(c, out, '');
    delete out.global_backgrounds;
  }
  for (const f of MODE_PLUGIN_FIELDS) if (out[f] === undefined) delete out[f];
  return { config: out, ...report, simulate: c.simulate, tracer: format.tracer };
}

/**
 * Backgrounds of the whole runtime: OM1's global_backgrounds (v1.1), and the older top-level
 * backgrounds of a file with modes (in a single-mode file the top-level backgrounds are its one mode's own).
 */
function globalBackgroundsOf(raw: Record<string, unknown>): Array<{ b: Entry; path: string }> {
  return (isObject(raw.modes) ? (['backgrounds', 'global_backgrounds'] as const) : (['global_backgrounds'] as const)).flatMap((key) =>
    asEntries(raw[key]).map((b, i) => ({ b, path: `${key}[${i}]` })),
  );
}

/** The scope a mode's plugins are translated in: the robot, and the options of the backgrounds that run with the mode. */
function scopeFor(c: Conversion, mode: Record<string, unknown>): Scope {
  const backgrounds = [...c.globalBackgrounds.map((g) => g.b), ...modeBackgrounds(mode, '').map((x) => x.b)];
  return {
    robot: c.robot,
    transport: c.transport,
    networkInterface: c.networkInterface,
    backgrounds: new Map(backgrounds.map((b) => [String(b.type), optionsOf(b)] as const)),
    simulate: c.simulate,
  };
}

/** URID placeholders and the robot's address fields (the body's binding carries them). */
function convertRobotFields(c: Conversion): void {
  const { raw, out } = c;
  if (typeof raw.URID === 'string' && PLACEHOLDER_URIDS.has(raw.URID.trim().toLowerCase())) {
    delete out.URID;
    say(c, 'URID', `${JSON.stringify(raw.URID)} is OM1's placeholder -> no URID (set URID to this robot's id to join a fleet)`);
  }
  for (const key of ['unitree_ethernet', 'robot_ip'] as const) {
    if (raw[key] === undefined) continue;
    delete out[key];
    say(
      c,
      key,
      `${JSON.stringify(raw[key])} -> ${c.robot ? `the ${c.robot} body's binding (${key === 'unitree_ethernet' ? 'network_interface' : 'robot address'})` : 'not needed: the file names no robot body'}`,
    );
  }
}

/** OM1's knowledge_base block: the texts are indexed here; its embedding server is not called. */
function convertKnowledgeBase(c: Conversion, file: string | undefined): void {
  const { raw, out } = c;
  if (!isObject(raw.knowledge_base)) {
    if (raw.knowledge_base !== undefined) {
      delete out.knowledge_base;
      c.report.missing.push('knowledge_base: not an object; left out');
    }
    return;
  }
  const kb = { ...raw.knowledge_base };
  const root = kb.knowledge_base_root;
  if (typeof kb.base_url === 'string' && kb.base_url) {
    // OM1's base_url is only its embedding server (the question becomes a vector there); the texts are local.
    say(
      c,
      'knowledge_base.base_url',
      `${JSON.stringify(kb.base_url)}: OM1's embedding server is not called: passages are found by their words here (SQLite FTS5, BM25); min_score is then the share of the question's words a passage must match`,
    );
    delete kb.base_url;
  }
  if (!(typeof root === 'string' && root)) {
    // OM1 reads knowledge_base/NAME/NAME.pkl (the texts) and NAME.faiss (their vectors) in its checkout, beside config/.
    const name = typeof kb.knowledge_base_name === 'string' && kb.knowledge_base_name ? kb.knowledge_base_name : 'om';
    const folder = `../knowledge_base/${name}`;
    kb.knowledge_base_root = folder;
    say(
      c,
      'knowledge_base',
      `${JSON.stringify(name)} -> the folder OM1 reads, ${folder} from the file's folder (its ${name}.pkl passages, and any text or Markdown documents)`,
    );
    if (file && !existsSync(resolve(dirname(file), folder)))
      c.report.warnings.push(
        `knowledge_base: ${resolve(dirname(file), folder)} does not exist: the robot answers without its knowledge base until it does (OM1 refuses to start without it)`,
      );
  } else say(c, 'knowledge_base', `${JSON.stringify(kb.knowledge_base_name ?? root)} -> local index of ${JSON.stringify(root)} (SQLite FTS5, BM25)`);
  out.knowledge_base = kb;
}

/** OM1's memory block: carried out by the runtime's memory, found by words instead of its embedding model. */
function convertMemory(c: Conversion): void {
  const { raw, out } = c;
  if (!isObject(raw.memory)) return;
  say(c, 'memory', `enabled: ${JSON.stringify(raw.memory.enabled ?? false)} -> the runtime's memory (facts, places, conversation summaries; src/memory/)`);
  if (raw.memory.embedding_model === undefined) return;
  // OM1 embeds memories with this model for similarity search; here memories are found by their words.
  const { embedding_model, ...memory } = raw.memory;
  out.memory = memory;
  say(
    c,
    'memory.embedding_model',
    `${JSON.stringify(embedding_model)}: not called: this runtime finds memories by their words (SQLite FTS5, BM25) on the robot, with no embedding model; min_score is then the share of the question's words a memory must match`,
  );
}

/** OM1's lidar entries, wherever they are, are the one sensor of the robot: the top-level `lidar` block. */
function convertLidar(c: Conversion): void {
  const { raw } = c;
  const found: Array<{ type: string; options: Options; path: string }> = [];
  const collect = (m: Record<string, unknown>, prefix: string, keys: readonly string[]) => {
    for (const key of keys)
      asEntries(m[key]).forEach((e, i) => {
        if (LIDAR_TYPES.has(String(e.type))) found.push({ type: String(e.type), options: optionsOf(e), path: `${prefix}${key}[${i}]` });
      });
  };
  const modeKeys = ['agent_inputs', 'backgrounds', 'agent_backgrounds'] as const;
  if (isObject(raw.modes)) {
    collect(raw, '', ['backgrounds', 'global_backgrounds']);
    for (const [name, mode] of Object.entries(raw.modes)) if (isObject(mode)) collect(mode, `modes.${name}.`, modeKeys);
  } else {
    collect(raw, '', modeKeys);
    collect(raw, '', ['global_backgrounds']);
  }
  if (found.length === 0 || raw.lidar !== undefined) return;
  const { block, notes } = lidarBlock(found);
  c.out.lidar = block;
  say(c, 'lidar', `${[...new Set(found.map((e) => e.type))].join(', ')} -> lidar { source: ${String(block.source)} } (${notes.join('; ')})`);
}

/** Reports one translation and hands a translated entry to `onOk`. */
function apply(c: Conversion, t: Translation, path: string, from: string, onOk: (entry: Entry) => void): void {
  if (t.kind === 'ok') {
    const to =
      t.entry.type !== undefined
        ? String(t.entry.type)
        : t.entry.name !== undefined
          ? `${String(t.entry.name)}/${String(t.entry.connector)}`
          : `${String(t.entry.hook_type)} ${String(t.entry.handler_type)} hook`;
    say(c, path, `${from} -> ${to}${t.notes.length ? ` (${t.notes.join('; ')})` : ''}`);
    onOk(t.entry);
  } else if (t.kind === 'carried') say(c, path, `${from} -> carried by ${t.by}`);
  else if (t.kind === 'missing') c.report.missing.push(`${path}: ${from}: ${t.reason}`);
  else c.report.unsupported.push(`${path}: ${from}: talks only to ${t.service}; unsupported`);
}

/** A `cortex_llm` entry translated (as it was when it is not an object or not translated). */
function llmOf(c: Conversion, entry: unknown, path: string): unknown {
  if (!isObject(entry)) return entry;
  const type = String(entry.type);
  let next: unknown = entry;
  const prefixes = (p: string) => MODEL_PREFIXES[p as keyof typeof MODEL_PREFIXES] ?? [];
  apply(c, translateLlm(type, optionsOf(entry), prefixes, isObject(c.out.knowledge_base)), `${path}.type`, type, (e) => {
    next = { ...entry, ...e };
  });
  return next;
}

/** The file's global model, translated once. */
function globalLlm(c: Conversion): Entry | undefined {
  c.translatedGlobal ??= { value: c.raw.cortex_llm === undefined ? undefined : llmOf(c, c.raw.cortex_llm, 'cortex_llm') };
  return isObject(c.translatedGlobal.value) ? c.translatedGlobal.value : undefined;
}

/**
 * OM1's ConversationHistoryInput puts the last rounds of the conversation in the prompt: here the
 * mode's model keeps them in its history (the global model copied into the mode when it has none).
 */
function keepHistory(c: Conversion, m: Record<string, unknown>, prefix: string, rounds: number): void {
  const own = isObject(m.cortex_llm);
  const entry = own ? (m.cortex_llm as Entry) : globalLlm(c);
  if (!entry || !isObject(entry)) return;
  const config = isObject(entry.config) ? entry.config : {};
  const had = num(config.history_length) ?? 0;
  if (had >= rounds) return;
  m.cortex_llm = { ...entry, config: { ...config, history_length: rounds } };
  say(
    c,
    `${prefix}cortex_llm.config.history_length`,
    `${had} -> ${rounds} (ConversationHistoryInput's max_rounds: the model keeps the last ${rounds} rounds${own ? '' : "; the file's model, for this mode"})`,
  );
}

/** Translates one mode (or a legacy file's top level) in place into `m`. */
function convertMode(c: Conversion, m: Record<string, unknown>, base: string): void {
  const prefix = base ? `${base}.` : '';
  const scope = scopeFor(c, m);
  const { inputs, historyRounds } = convertInputs(c, m, prefix, scope);
  const actions = convertActions(c, m, prefix, scope);
  const producers = convertBackgrounds(c, m, prefix, scope, inputs);
  if (producers.length) m.backgrounds = producers;
  else delete m.backgrounds;
  delete m.agent_backgrounds;
  if (Array.isArray(m.lifecycle_hooks)) m.lifecycle_hooks = convertHooks(c, m, prefix, actions);
  if (Array.isArray(m.simulators)) {
    const simulators: Entry[] = [];
    asEntries(m.simulators).forEach((e, i) => {
      const type = String(e.type);
      apply(c, translateSimulator(type, optionsOf(e)), `${prefix}simulators[${i}].type`, type, (n) => simulators.push(n));
    });
    m.simulators = simulators;
  }
  m.agent_inputs = inputs;
  m.agent_actions = actions;
  if (m.cortex_llm !== undefined) m.cortex_llm = llmOf(c, m.cortex_llm, `${prefix}cortex_llm`);
  if (historyRounds > 0) keepHistory(c, m, prefix, historyRounds);
  convertExecutionMode(c, m, prefix);
}

/** A mode's inputs, and the rounds of history its ConversationHistoryInput asks for (0 without one). */
function convertInputs(c: Conversion, m: Record<string, unknown>, prefix: string, scope: Scope): { inputs: Entry[]; historyRounds: number } {
  let historyRounds = 0;
  const inputs: Entry[] = [];
  asEntries(m.agent_inputs).forEach((e, i) => {
    const type = String(e.type);
    const t = translateInput(type, optionsOf(e), scope);
    if (t.kind === 'carried' && /Locations/.test(type)) m.remember_locations = true;
    if (type === 'ConversationHistoryInput') historyRounds = Math.max(historyRounds, num(optionsOf(e).max_rounds) ?? 3);
    apply(c, t, `${prefix}agent_inputs[${i}].type`, `${type}${describe(optionsOf(e))}`, (n) => inputs.push(n));
  });
  return { inputs, historyRounds };
}

/** A mode's actions; each keeps its label for the model (OM1's action name when it had none). */
function convertActions(c: Conversion, m: Record<string, unknown>, prefix: string, scope: Scope): Entry[] {
  const actions: Entry[] = [];
  asEntries(m.agent_actions).forEach((e, i) => {
    const name = String(e.name);
    const connector = String(e.connector);
    apply(c, translateAction(name, connector, optionsOf(e), scope), `${prefix}agent_actions[${i}]`, `${name}/${connector}${describe(optionsOf(e))}`, (n) => {
      const { implementation: _impl, ...rest } = e;
      actions.push({ ...rest, ...n, llm_label: e.llm_label ?? name });
    });
  });
  return actions;
}

/**
 * The backgrounds that run with a mode (the file's global ones, then the mode's own). Backgrounds stay
 * backgrounds: context producers of the mode under its supervisor (actors/backgrounds/supervisor.ts).
 */
function convertBackgrounds(c: Conversion, m: Record<string, unknown>, prefix: string, scope: Scope, inputs: Entry[]): Entry[] {
  const producers: Entry[] = [];
  const has = (type: string) => [...inputs, ...producers].some((x) => x.type === type);
  for (const { b, path } of [...c.globalBackgrounds, ...modeBackgrounds(m, prefix)]) {
    const type = String(b.type);
    const t = translateBackground(type, optionsOf(b), scope, { hasBody: has('BodyInput'), hasGps: has('GpsInput') });
    apply(c, t, `${path}.type`, `${type} (background)`, (n) => producers.push(n));
  }
  return producers;
}

/** A mode's lifecycle hooks; a hook that needs no translation is kept as written. */
function convertHooks(c: Conversion, m: Record<string, unknown>, prefix: string, actions: Entry[]): Entry[] {
  const hooks: Entry[] = [];
  const conversation = actions.find((a) => a.name === 'conversation')?.llm_label;
  const speaks = actions.some((a) => a.name === 'speak');
  asEntries(m.lifecycle_hooks).forEach((h, i) => {
    const t = translateHook(h, typeof conversation === 'string' ? conversation : undefined, speaks);
    if (t.kind === 'ok' && t.entry === h) hooks.push(h);
    else apply(c, t, `${prefix}lifecycle_hooks[${i}]`, `${String(h.hook_type)} ${String(h.handler_type)} hook`, (n) => hooks.push(n));
  });
  return hooks;
}

/** OM1's action_execution_mode and action_dependencies are fields of this runtime too (actors/actions/ordering.ts). */
function convertExecutionMode(c: Conversion, m: Record<string, unknown>, prefix: string): void {
  const mode = m.action_execution_mode;
  if (mode !== undefined && mode !== 'concurrent') {
    say(
      c,
      `${prefix}action_execution_mode`,
      `${JSON.stringify(mode)} -> the same (each action of an answer waits for ${mode === 'sequential' ? 'the one before it' : 'the actions action_dependencies names'})`,
    );
  }
  if (m.action_dependencies !== undefined && mode !== 'dependencies') {
    // OM1 reads the dependencies only in `dependencies` mode: carrying them elsewhere would be a check error for nothing.
    delete m.action_dependencies;
    say(
      c,
      `${prefix}action_dependencies`,
      `dropped: OM1 reads them only with action_execution_mode "dependencies" (this mode's is ${JSON.stringify(mode ?? 'concurrent')})`,
    );
  }
}
