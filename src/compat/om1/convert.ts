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
  const simulate = options.simulate === true || format.simulate;
  const { robot, transport } = familyOf(JSON.stringify(raw));
  const networkInterface = typeof raw.unitree_ethernet === 'string' && raw.unitree_ethernet ? raw.unitree_ethernet : undefined;
  const say = (path: string, line: string) => report.translations.push(`${path}: ${line}`);

  if (typeof raw.URID === 'string' && PLACEHOLDER_URIDS.has(raw.URID.trim().toLowerCase())) {
    delete out.URID;
    say('URID', `${JSON.stringify(raw.URID)} is OM1's placeholder -> no URID (set URID to this robot's id to join a fleet)`);
  }
  for (const key of ['unitree_ethernet', 'robot_ip'] as const) {
    if (raw[key] === undefined) continue;
    delete out[key];
    say(
      key,
      `${JSON.stringify(raw[key])} -> ${robot ? `the ${robot} body's binding (${key === 'unitree_ethernet' ? 'network_interface' : 'robot address'})` : 'not needed: the file names no robot body'}`,
    );
  }
  if (isObject(raw.knowledge_base)) {
    const kb = { ...raw.knowledge_base };
    let root = kb.knowledge_base_root;
    if (typeof kb.base_url === 'string' && kb.base_url) {
      // OM1's base_url is only its embedding server (the question becomes a vector there); the texts are local.
      say(
        'knowledge_base.base_url',
        `${JSON.stringify(kb.base_url)}: OM1's embedding server is not called: passages are found by their words here (SQLite FTS5, BM25); min_score is then the share of the question's words a passage must match`,
      );
      delete kb.base_url;
    }
    if (!(typeof root === 'string' && root)) {
      // OM1 reads knowledge_base/NAME/NAME.pkl (the texts) and NAME.faiss (their vectors) in its checkout, beside config/.
      const name = typeof kb.knowledge_base_name === 'string' && kb.knowledge_base_name ? kb.knowledge_base_name : 'om';
      const folder = `../knowledge_base/${name}`;
      root = folder;
      kb.knowledge_base_root = folder;
      say(
        'knowledge_base',
        `${JSON.stringify(name)} -> the folder OM1 reads, ${folder} from the file's folder (its ${name}.pkl passages, and any text or Markdown documents)`,
      );
      if (options.file && !existsSync(resolve(dirname(options.file), folder)))
        report.warnings.push(
          `knowledge_base: ${resolve(dirname(options.file), folder)} does not exist: the robot answers without its knowledge base until it does (OM1 refuses to start without it)`,
        );
    } else say('knowledge_base', `${JSON.stringify(kb.knowledge_base_name ?? root)} -> local index of ${JSON.stringify(root)} (SQLite FTS5, BM25)`);
    out.knowledge_base = kb;
  } else if (raw.knowledge_base !== undefined) {
    delete out.knowledge_base;
    report.missing.push('knowledge_base: not an object; left out');
  }
  if (isObject(raw.memory)) {
    say('memory', `enabled: ${JSON.stringify(raw.memory.enabled ?? false)} -> the runtime's memory (facts, places, conversation summaries; src/memory/)`);
    if (raw.memory.embedding_model !== undefined) {
      // OM1 embeds memories with this model for similarity search; here memories are found by their words.
      const { embedding_model, ...memory } = raw.memory;
      out.memory = memory;
      say(
        'memory.embedding_model',
        `${JSON.stringify(embedding_model)}: not called: this runtime finds memories by their words (SQLite FTS5, BM25) on the robot, with no embedding model; min_score is then the share of the question's words a memory must match`,
      );
    }
  }

  // Backgrounds of the whole runtime: OM1's global_backgrounds (v1.1), and the older top-level backgrounds of a file with modes.
  // (In a single-mode file the top-level backgrounds are its one mode's own.)
  const globalBackgrounds = (isObject(raw.modes) ? (['backgrounds', 'global_backgrounds'] as const) : (['global_backgrounds'] as const)).flatMap((key) =>
    asEntries(raw[key]).map((b, i) => ({ b, path: `${key}[${i}]` })),
  );
  const backgroundOptions = (mode: Record<string, unknown>) =>
    new Map([...globalBackgrounds.map((g) => g.b), ...modeBackgrounds(mode, '').map((x) => x.b)].map((b) => [String(b.type), optionsOf(b)] as const));
  const scopeFor = (mode: Record<string, unknown>): Scope => ({
    robot,
    transport,
    networkInterface,
    backgrounds: backgroundOptions(mode),
    simulate,
  });

  // OM1's lidar entries, wherever they are, are the one sensor of the robot: the top-level `lidar` block.
  const lidarEntries: Array<{ type: string; options: Options; path: string }> = [];
  const collectLidar = (m: Record<string, unknown>, prefix: string) => {
    for (const key of ['agent_inputs', 'backgrounds', 'agent_backgrounds'] as const)
      asEntries(m[key]).forEach((e, i) => {
        if (LIDAR_TYPES.has(String(e.type))) lidarEntries.push({ type: String(e.type), options: optionsOf(e), path: `${prefix}${key}[${i}]` });
      });
  };
  if (isObject(raw.modes)) {
    for (const key of ['backgrounds', 'global_backgrounds'] as const)
      asEntries(raw[key]).forEach((e, i) => {
        if (LIDAR_TYPES.has(String(e.type))) lidarEntries.push({ type: String(e.type), options: optionsOf(e), path: `${key}[${i}]` });
      });
    for (const [name, mode] of Object.entries(raw.modes)) if (isObject(mode)) collectLidar(mode, `modes.${name}.`);
  } else {
    collectLidar(raw, '');
    asEntries(raw.global_backgrounds).forEach((e, i) => {
      if (LIDAR_TYPES.has(String(e.type))) lidarEntries.push({ type: String(e.type), options: optionsOf(e), path: `global_backgrounds[${i}]` });
    });
  }
  if (lidarEntries.length > 0 && raw.lidar === undefined) {
    const { block, notes } = lidarBlock(lidarEntries);
    out.lidar = block;
    say('lidar', `${[...new Set(lidarEntries.map((e) => e.type))].join(', ')} -> lidar { source: ${String(block.source)} } (${notes.join('; ')})`);
  }

  const apply = (t: Translation, path: string, from: string, onOk: (entry: Entry) => void) => {
    if (t.kind === 'ok') {
      const to =
        t.entry.type !== undefined
          ? String(t.entry.type)
          : t.entry.name !== undefined
            ? `${String(t.entry.name)}/${String(t.entry.connector)}`
            : `${String(t.entry.hook_type)} ${String(t.entry.handler_type)} hook`;
      say(path, `${from} -> ${to}${t.notes.length ? ` (${t.notes.join('; ')})` : ''}`);
      onOk(t.entry);
    } else if (t.kind === 'carried') say(path, `${from} -> carried by ${t.by}`);
    else if (t.kind === 'missing') report.missing.push(`${path}: ${from}: ${t.reason}`);
    else report.unsupported.push(`${path}: ${from}: talks only to ${t.service}; unsupported`);
  };

  const llm = (entry: unknown, path: string): unknown => {
    if (!isObject(entry)) return entry;
    const type = String(entry.type);
    let next: unknown = entry;
    apply(
      translateLlm(type, optionsOf(entry), (p) => MODEL_PREFIXES[p as keyof typeof MODEL_PREFIXES] ?? [], isObject(out.knowledge_base)),
      `${path}.type`,
      type,
      (e) => {
        next = { ...entry, ...e };
      },
    );
    return next;
  };

  let translatedGlobal: { value: unknown } | undefined;
  /** The file's global model, translated once. */
  const globalLlm = (): Entry | undefined => {
    translatedGlobal ??= { value: raw.cortex_llm === undefined ? undefined : llm(raw.cortex_llm, 'cortex_llm') };
    return isObject(translatedGlobal.value) ? translatedGlobal.value : undefined;
  };

  /**
   * OM1's ConversationHistoryInput puts the last rounds of the conversation in the prompt: here the
   * mode's model keeps them in its history (the global model copied into the mode when it has none).
   */
  const keepHistory = (m: Record<string, unknown>, prefix: string, rounds: number) => {
    const own = isObject(m.cortex_llm);
    const entry = own ? (m.cortex_llm as Entry) : globalLlm();
    if (!entry || !isObject(entry)) return;
    const config = isObject(entry.config) ? entry.config : {};
    const had = num(config.history_length) ?? 0;
    if (had >= rounds) return;
    m.cortex_llm = { ...entry, config: { ...config, history_length: rounds } };
    say(
      `${prefix}cortex_llm.config.history_length`,
      `${had} -> ${rounds} (ConversationHistoryInput's max_rounds: the model keeps the last ${rounds} rounds${own ? '' : "; the file's model, for this mode"})`,
    );
  };

  /** Translates one mode (or a legacy file's top level) in place into `m`. */
  const convertMode = (m: Record<string, unknown>, base: string, globalBgs: Array<{ b: Entry; path: string }>) => {
    const prefix = base ? `${base}.` : '';
    const scope = scopeFor(m);
    let historyRounds = 0;
    const inputs: Entry[] = [];
    asEntries(m.agent_inputs).forEach((e, i) => {
      const type = String(e.type);
      const t = translateInput(type, optionsOf(e), scope);
      if (t.kind === 'carried' && /Locations/.test(type)) m.remember_locations = true;
      if (type === 'ConversationHistoryInput') historyRounds = Math.max(historyRounds, num(optionsOf(e).max_rounds) ?? 3);
      apply(t, `${prefix}agent_inputs[${i}].type`, `${type}${describe(optionsOf(e))}`, (n) => inputs.push(n));
    });
    const actions: Entry[] = [];
    asEntries(m.agent_actions).forEach((e, i) => {
      const name = String(e.name);
      const connector = String(e.connector);
      const t = translateAction(name, connector, optionsOf(e), scope);
      apply(t, `${prefix}agent_actions[${i}]`, `${name}/${connector}${describe(optionsOf(e))}`, (n) => {
        const { implementation: _impl, ...rest } = e;
        actions.push({ ...rest, ...n, llm_label: e.llm_label ?? name });
      });
    });
    const producers: Entry[] = [];
    const hasBody = () => [...inputs, ...producers].some((x) => x.type === 'BodyInput');
    const hasGps = () => [...inputs, ...producers].some((x) => x.type === 'GpsInput');
    const backgrounds = [...globalBgs, ...modeBackgrounds(m, prefix)];
    delete m.agent_backgrounds;
    // Backgrounds stay backgrounds: context producers of the mode under its supervisor (actors/backgrounds/supervisor.ts).
    for (const { b, path } of backgrounds) {
      const type = String(b.type);
      apply(translateBackground(type, optionsOf(b), scope, { hasBody: hasBody(), hasGps: hasGps() }), `${path}.type`, `${type} (background)`, (n) =>
        producers.push(n),
      );
    }
    if (producers.length) m.backgrounds = producers;
    else delete m.backgrounds;
    if (Array.isArray(m.lifecycle_hooks)) {
      const hooks: Entry[] = [];
      const conversation = actions.find((a) => a.name === 'conversation')?.llm_label;
      asEntries(m.lifecycle_hooks).forEach((h, i) => {
        const t = translateHook(
          h,
          typeof conversation === 'string' ? conversation : undefined,
          actions.some((a) => a.name === 'speak'),
        );
        if (t.kind === 'ok' && t.entry === h) hooks.push(h);
        else apply(t, `${prefix}lifecycle_hooks[${i}]`, `${String(h.hook_type)} ${String(h.handler_type)} hook`, (n) => hooks.push(n));
      });
      m.lifecycle_hooks = hooks;
    }
    if (Array.isArray(m.simulators)) {
      const simulators: Entry[] = [];
      asEntries(m.simulators).forEach((e, i) => {
        const type = String(e.type);
        apply(translateSimulator(type, optionsOf(e)), `${prefix}simulators[${i}].type`, type, (n) => simulators.push(n));
      });
      m.simulators = simulators;
    }
    m.agent_inputs = inputs;
    m.agent_actions = actions;
    if (m.cortex_llm !== undefined) m.cortex_llm = llm(m.cortex_llm, `${prefix}cortex_llm`);
    if (historyRounds > 0) keepHistory(m, prefix, historyRounds);
    // OM1's action_execution_mode and action_dependencies are fields of this runtime too (actors/actions/ordering.ts).
    const mode = m.action_execution_mode;
    if (mode !== undefined && mode !== 'concurrent') {
      say(
        `${prefix}action_execution_mode`,
        `${JSON.stringify(mode)} -> the same (each action of an answer waits for ${mode === 'sequential' ? 'the one before it' : 'the actions action_dependencies names'})`,
      );
    }
    if (m.action_dependencies !== undefined && mode !== 'dependencies') {
      // OM1 reads the dependencies only in `dependencies` mode: carrying them elsewhere would be a check error for nothing.
      delete m.action_dependencies;
      say(
        `${prefix}action_dependencies`,
        `dropped: OM1 reads them only with action_execution_mode "dependencies" (this mode's is ${JSON.stringify(mode ?? 'concurrent')})`,
      );
    }
  };

  if (isObject(raw.modes)) {
    const modes: Record<string, unknown> = {};
    for (const [name, mode] of Object.entries(raw.modes)) {
      if (!isObject(mode)) {
        Object.defineProperty(modes, name, { value: mode, enumerable: true, writable: true, configurable: true });
        continue;
      }
      const m = { ...mode };
      applyModeFormat(m, name, `modes.${name}.`, report.translations);
      convertMode(m, `modes.${name}`, globalBackgrounds);
      Object.defineProperty(modes, name, { value: m, enumerable: true, writable: true, configurable: true });
    }
    out.modes = modes;
    delete out.backgrounds;
    delete out.global_backgrounds;
    delete out.agent_backgrounds;
    if (raw.cortex_llm !== undefined) {
      globalLlm();
      out.cortex_llm = translatedGlobal?.value;
    }
  } else {
    // A single-mode file: its top level is its one mode (the loader turns it into a mode).
    convertMode(out, '', globalBackgrounds);
    delete out.global_backgrounds;
  }
  for (const f of MODE_PLUGIN_FIELDS) if (out[f] === undefined) delete out[f];
  return { config: out, ...report, simulate, tracer: format.tracer };
}
