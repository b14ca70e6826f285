// What WebSim shows, as one reducer over agent events: shared by the server (snapshots) and the page (live updates).
// No DOM and no Node imports: this file is compiled into both the runtime and the page bundle.

/** The agent events WebSim reads; structurally the same as AgentEvent in src/cortex/events.ts. */
export type SimEvent = { type: string; at: number } & Record<string, unknown>;

export interface ModeInfo {
  name: string;
  display_name: string;
  description: string;
}

/** Facts about the configuration that do not change while the agent runs. */
export interface SimMeta {
  configName: string;
  name: string;
  default_mode: string;
  allow_manual_switching: boolean;
  /** Why the switch buttons are disabled, when they are. */
  manual_disabled_reason: string | null;
  modes: ModeInfo[];
  /** The configuration, secrets redacted. */
  config: unknown;
}

export interface Transition {
  at: number;
  from: string;
  to: string;
  trigger: string;
  reason: string;
  rule_index?: number;
}

export interface ActionEntry {
  at: number;
  mode: string;
  label: string;
  name: string;
  connector: string;
  state: string;
  value?: unknown;
  error?: string;
}

export interface HookEntry {
  at: number;
  mode: string;
  hook_type: string;
  handler_type: string;
  ok: boolean;
  error?: string;
  duration_ms?: number;
}

export interface SimState {
  mode: string;
  status: 'running' | 'stopping' | 'stopped';
  lastTransition: Transition | null;
  lastRefusal: { at: number; requested: string; reason: string } | null;
  /** The latest text of each input, by input name. */
  inputs: Record<string, { at: number; text: string; final: boolean; mode: string }>;
  prompt: { at: number; tick: number; mode: string; text: string } | null;
  answer: { at: number; tick: number; mode: string; model: string; text?: string; tool_calls: Array<{ name: string; arguments: unknown }>; latency_ms: number; cost_cu?: number } | null;
  modelError: { at: number; error: string } | null;
  /** Newest first, at most MAX_ACTIONS. */
  actions: ActionEntry[];
  /** Newest first, at most MAX_HOOKS. */
  hooks: HookEntry[];
  /** Stream socket states, by `kind:input`. */
  streams: Record<string, { at: number; kind: string; input: string; state: string; detail?: string }>;
  mcp: Record<string, { at: number; state: string; detail?: string }>;
  counters: { ticks: number; late_ticks: number; model_calls: number; model_errors: number; cu_spent: number };
  /** The face shown by the avatar panel: the latest `face` action value that started running. */
  face: { emotion: string; at: number } | null;
  /** Newest first, at most MAX_ERRORS. */
  errors: Array<{ at: number; source: string; message: string }>;
  /** The safety governor: the latched e-stop (null when released) and its last stop or refusal. */
  safety: { estop: { source: string; reason: string; at: number } | null; last: { at: number; kind: string; cause?: string; reason: string } | null };
}

export const MAX_ACTIONS = 30;
export const MAX_HOOKS = 30;
export const MAX_ERRORS = 10;

/** Messages the server sends on the socket. */
export type ServerMessage =
  | { type: 'snapshot'; meta: SimMeta; state: SimState }
  | { type: 'event'; event: SimEvent }
  | { type: 'reply'; id: number; ok: boolean; reason?: string };

/** Messages the page sends (the e-stop ones are checked by src/websim/estop.ts). */
export type ClientMessage =
  | { type: 'mode.switch'; id: number; mode: string }
  | { type: 'text'; id: number; text: string }
  | { type: 'estop'; id: number; reason?: string }
  | { type: 'estop.release'; id: number; token: string };

export function initialState(mode: string): SimState {
  return {
    mode,
    status: 'running',
    lastTransition: null,
    lastRefusal: null,
    inputs: {},
    prompt: null,
    answer: null,
    modelError: null,
    actions: [],
    hooks: [],
    streams: {},
    mcp: {},
    counters: { ticks: 0, late_ticks: 0, model_calls: 0, model_errors: 0, cu_spent: 0 },
    face: null,
    errors: [],
    safety: { estop: null, last: null },
  };
}

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const TERMINAL = new Set(['done', 'failed', 'dropped', 'interrupted']);

/** The emotion carried by a face action value: `{emotion: "joy"}` or a bare string. */
export function emotionOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { emotion?: unknown }).emotion === 'string') return (value as { emotion: string }).emotion;
  return undefined;
}

/**
 * An action command has no id on the bus, so a state change updates the newest unfinished entry of
 * the same action label; a `queued` (or an update with no unfinished entry) starts a new one.
 */
function applyAction(list: ActionEntry[], e: ActionEntry): ActionEntry[] {
  if (e.state !== 'queued') {
    const i = list.findIndex((a) => a.label === e.label && a.mode === e.mode && !TERMINAL.has(a.state));
    if (i >= 0) {
      const prev = list[i]!;
      const next = { ...prev, ...e, value: e.value ?? prev.value };
      return [next, ...list.slice(0, i), ...list.slice(i + 1)].slice(0, MAX_ACTIONS);
    }
  }
  return [e, ...list].slice(0, MAX_ACTIONS);
}

/** Applies one event; returns a new state (the input is not modified). Unknown event types are ignored. */
export function reduce(s: SimState, e: SimEvent): SimState {
  switch (e.type) {
    case 'agent.started':
      return { ...s, mode: str(e.mode, s.mode), status: 'running' };
    case 'agent.stopping':
      return { ...s, status: 'stopping' };
    case 'agent.stopped':
      return { ...s, status: 'stopped' };
    case 'mode.changed': {
      const t: Transition = { at: e.at, from: str(e.from), to: str(e.to), trigger: str(e.trigger), reason: str(e.reason) };
      if (typeof e.rule_index === 'number') t.rule_index = e.rule_index;
      return { ...s, mode: t.to, lastTransition: t };
    }
    case 'mode.refused':
      return { ...s, lastRefusal: { at: e.at, requested: str(e.requested), reason: str(e.reason) } };
    case 'hook': {
      const h: HookEntry = { at: e.at, mode: str(e.mode), hook_type: str(e.hook_type), handler_type: str(e.handler_type), ok: e.ok === true };
      if (typeof e.error === 'string') h.error = e.error;
      if (typeof e.duration_ms === 'number') h.duration_ms = e.duration_ms;
      return { ...s, hooks: [h, ...s.hooks].slice(0, MAX_HOOKS) };
    }
    case 'tick':
      return { ...s, counters: { ...s.counters, ticks: s.counters.ticks + 1, late_ticks: s.counters.late_ticks + num(e.late_skipped) } };
    case 'input':
      return { ...s, inputs: { ...s.inputs, [str(e.input, 'input')]: { at: e.at, text: str(e.text), final: e.final === true, mode: str(e.mode) } } };
    case 'prompt':
      return { ...s, prompt: { at: e.at, tick: num(e.tick), mode: str(e.mode), text: str(e.prompt) } };
    case 'model.answer': {
      const calls = Array.isArray(e.tool_calls) ? (e.tool_calls as Array<{ name: string; arguments: unknown }>) : [];
      const answer: NonNullable<SimState['answer']> = { at: e.at, tick: num(e.tick), mode: str(e.mode), model: str(e.model), tool_calls: calls, latency_ms: num(e.latency_ms) };
      if (typeof e.text === 'string') answer.text = e.text;
      if (typeof e.cost_cu === 'number') answer.cost_cu = e.cost_cu;
      const c = s.counters;
      return { ...s, answer, counters: { ...c, model_calls: c.model_calls + 1, cu_spent: c.cu_spent + num(e.cost_cu) } };
    }
    case 'model.error': {
      const c = s.counters;
      return { ...s, modelError: { at: e.at, error: str(e.error) }, counters: { ...c, model_calls: c.model_calls + 1, model_errors: c.model_errors + 1 } };
    }
    case 'action': {
      const a: ActionEntry = { at: e.at, mode: str(e.mode), label: str(e.label), name: str(e.name), connector: str(e.connector), state: str(e.state) };
      if (e.value !== undefined) a.value = e.value;
      if (typeof e.error === 'string') a.error = e.error;
      const actions = applyAction(s.actions, a);
      // The updated entry is first; its value survives from `queued` when later states omit it.
      const emotion = a.name === 'face' && (a.state === 'running' || a.state === 'done') ? emotionOf(actions[0]!.value) : undefined;
      return { ...s, actions, face: emotion === undefined ? s.face : { emotion, at: e.at } };
    }
    case 'stream': {
      const key = `${str(e.kind)}:${str(e.input)}`;
      const entry: SimState['streams'][string] = { at: e.at, kind: str(e.kind), input: str(e.input), state: str(e.state) };
      if (typeof e.detail === 'string') entry.detail = e.detail;
      return { ...s, streams: { ...s.streams, [key]: entry } };
    }
    case 'mcp': {
      const entry: SimState['mcp'][string] = { at: e.at, state: str(e.state) };
      if (typeof e.detail === 'string') entry.detail = e.detail;
      return { ...s, mcp: { ...s.mcp, [str(e.server)]: entry } };
    }
    case 'safety': {
      const kind = str(e.kind);
      const last = { at: e.at, kind, reason: str(e.reason), ...(typeof e.cause === 'string' ? { cause: e.cause } : {}) };
      const estop = kind === 'estop' ? { source: str(e.source), reason: str(e.reason), at: e.at } : kind === 'release' ? null : (s.safety?.estop ?? null);
      return { ...s, safety: { estop, last } };
    }
    case 'error':
      return { ...s, errors: [{ at: e.at, source: str(e.source), message: str(e.message) }, ...s.errors].slice(0, MAX_ERRORS) };
    default:
      return s;
  }
}
