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
  /** When the command was queued, started running and ended (for the timeline). */
  queued_at?: number;
  started_at?: number;
  ended_at?: number;
  /** CU the service charged for it (speech synthesis). */
  cost_cu?: number;
}

/** A passage of the knowledge base or a memory a turn was given. */
export interface RecalledEntry {
  kind: string;
  source: string;
  score: number;
  text: string;
  person?: string;
}

/** One model call on the timeline: it ended at `at` after `latency_ms`. */
export interface ModelCall {
  at: number;
  mode: string;
  tick: number;
  model: string;
  latency_ms: number;
  cost_cu?: number;
  ok: boolean;
  /** Tool calls and text in a few words, or the error. */
  summary: string;
}

/** A line of the conversation: what the robot heard (final transcripts, typed lines) and what it said. */
export interface TranscriptLine {
  at: number;
  who: 'heard' | 'said';
  /** The input that heard it (heard) or the mode that said it (said). */
  source: string;
  text: string;
}

/** A socket session's latest state and counters, and its recent state changes (a reconnect storm shows here). */
export interface StreamEntry {
  at: number;
  kind: string;
  input: string;
  state: string;
  detail?: string;
  reason?: string;
  attempt?: number;
  delay_ms?: number;
  breaker?: boolean;
  connections?: number;
  sent_bytes?: number;
  dropped_bytes?: number;
  frames_sent?: number;
  frames_dropped?: number;
  cost_cu?: number;
  /** When the session last became `streaming`. */
  streaming_since?: number;
  /** Connection attempts after the first (counted from the state changes this page saw). */
  reconnects: number;
  /** The last state changes, newest first (at most MAX_STREAM_HISTORY). */
  history: Array<{ at: number; state: string; reason?: string }>;
}

export interface HookEntry {
  at: number;
  mode: string;
  hook_type: string;
  handler_type: string;
  ok: boolean;
  error?: string;
  /** Cut short by a mode switch or a stop: not a failure. */
  cancelled?: boolean;
  duration_ms?: number;
}

export interface SimState {
  mode: string;
  status: 'running' | 'stopping' | 'stopped';
  lastTransition: Transition | null;
  lastRefusal: { at: number; requested: string; reason: string } | null;
  /** The last voice turn: its outcome and how long after its origin each stage came (ms). */
  turn: {
    at: number;
    mode: string;
    outcome: string;
    origin: string;
    streamed: boolean;
    sentences: number;
    spoken: number;
    stages: Array<[string, number]>;
  } | null;
  /** Context values for `context_aware` rules as last set, by name, with who set them. */
  context: Record<string, { at: number; value: unknown; source: string }>;
  /** The robot body as BodyInput publishes it (odometry, or the map pose): pose, heading and the path so far. */
  body: BodyView | null;
  /** The latest text of each input, by input name. */
  inputs: Record<string, { at: number; text: string; final: boolean; mode: string }>;
  prompt: { at: number; tick: number; mode: string; text: string } | null;
  /** The passages and memories the last turn that heard something was given (source, score). */
  recall: { at: number; tick: number; query: string; used: RecalledEntry[]; note?: string } | null;
  answer: {
    at: number;
    tick: number;
    mode: string;
    model: string;
    text?: string;
    tool_calls: Array<{ name: string; arguments: unknown }>;
    latency_ms: number;
    cost_cu?: number;
  } | null;
  modelError: { at: number; error: string } | null;
  /** The model's health for the session, from `model` events: `streaming_off`, `failing`, `healthy`; null until one came. */
  modelHealth: { at: number; model: string; state: string; reason?: string } | null;
  /** Newest first, at most MAX_ACTIONS. */
  actions: ActionEntry[];
  /** Newest first, at most MAX_HOOKS. */
  hooks: HookEntry[];
  /** Stream socket states, by `kind:input`. */
  streams: Record<string, StreamEntry>;
  mcp: Record<string, { at: number; state: string; detail?: string }>;
  /** `cu_spent` is the model's; speech synthesis and recognition are counted apart. */
  counters: { ticks: number; late_ticks: number; model_calls: number; model_errors: number; cu_spent: number; cu_speech: number; cu_recognition: number };
  /** Model calls, newest first (at most MAX_CALLS). */
  calls: ModelCall[];
  /** What was heard and said, oldest first (at most MAX_TRANSCRIPT). */
  transcript: TranscriptLine[];
  /** The face shown by the avatar panel: the latest `face` action value that started running. */
  face: { emotion: string; at: number } | null;
  /**
   * Newest first, at most MAX_ERRORS. A failure that says the same as the newest one but for its
   * numbers (a retry delay, an attempt) is folded into it: `repeats` counts the others, `first` is when
   * the run of them began, `at` the latest.
   */
  errors: Array<{ at: number; source: string; message: string; repeats?: number; first?: number }>;
  /** The safety governor: the latched e-stop (null when released) and its last stop or refusal. */
  safety: { estop: { source: string; reason: string; at: number } | null; last: { at: number; kind: string; cause?: string; reason: string } | null };
}

export const MAX_ACTIONS = 30;
export const MAX_HOOKS = 30;
export const MAX_ERRORS = 10;

/** Two failure texts that differ only in their numbers ("reopened in 442 ms" and "in 371 ms"). */
export function sameBarNumbers(a: string, b: string): boolean {
  const shape = (m: string) => m.replace(/\d+(\.\d+)?/g, '#');
  return shape(a) === shape(b);
}
export const MAX_CALLS = 30;
export const MAX_TRANSCRIPT = 50;
export const MAX_STREAM_HISTORY = 12;

/** Messages the server sends on the socket. */
export type ServerMessage =
  | { type: 'snapshot'; meta: SimMeta; state: SimState }
  | { type: 'event'; event: SimEvent }
  | { type: 'reply'; id: number; ok: boolean; reason?: string }
  | { type: 'media'; media: MediaStatus }
  /** Whether this page may act (it proved the WebSim token) or only watch and press the e-stop. */
  | { type: 'access'; authed: boolean }
  /** One sentence of the robot's speech (a WAV or MP3 file, base64) for a page that listens, or the order to stop playing. */
  | { type: 'speech'; id: number; mime: string; duration_ms: number; data: string }
  | { type: 'speech.stop' };

/** What the camera and microphone panels show, sent about once a second (the frame itself is fetched from /frame.jpg). */
export interface MediaStatus {
  /** The newest frame's input and capture time; null when the current mode has no camera frame. */
  frame: { input: string; at: number } | null;
  /** The microphone level; null when the current mode listens to no microphone. */
  level: { input: string; rms_dbfs: number; peak_dbfs: number; at: number } | null;
  /** The robot's newest lidar scan (src/lidar/view.ts ScanPreview); null without a lidar or before its first scan. */
  scan?: LidarView | null;
}

/** What the lidar panel draws: returns in the robot's frame (cm forward, cm right), OM1's paths, the guard's lines. */
export interface LidarView {
  at: number;
  source: string;
  points: Array<[number, number]>;
  paths: Array<{ deg: number; free: boolean }>;
  path_m: number;
  half_width_m: number;
  ahead_m: number | null;
  guard?: { stop_m: number; slow_m: number };
}

/** Messages the page sends (the e-stop ones are checked by src/websim/estop.ts). */
export type ClientMessage =
  | { type: 'auth'; id: number; token: string }
  | { type: 'mode.switch'; id: number; mode: string }
  | { type: 'text'; id: number; text: string }
  | { type: 'context'; id: number; name: string; value: string }
  | { type: 'estop'; id: number; reason?: string }
  | { type: 'estop.release'; id: number; token: string }
  /** The microphone button (src/websim/voice.ts): its audio then rides binary frames of 16 kHz PCM. */
  | { type: 'mic.start'; id: number }
  | { type: 'mic.stop'; id: number }
  | { type: 'speech.listen'; id: number; on: boolean };

/** What the body panel draws: the newest pose (metres, degrees counter-clockwise) and the last BODY_PATH points. */
export interface BodyView {
  at: number;
  x: number;
  y: number;
  heading: number;
  distance?: number;
  battery?: number;
  path: Array<[number, number]>;
}

/** Points of the body's path the page keeps (older ones drop off). */
export const BODY_PATH = 200;

/** The body after a context event: a pose from `odom_*` (or the map pose `map_*`), appended to the path when it moved. */
export function bodyFrom(prev: BodyView | null, at: number, v: Record<string, unknown>): BodyView | null {
  const x = typeof v.odom_x === 'number' ? v.odom_x : typeof v.map_x === 'number' ? v.map_x : undefined;
  const y = typeof v.odom_y === 'number' ? v.odom_y : typeof v.map_y === 'number' ? v.map_y : undefined;
  const battery = typeof v.battery_percent === 'number' ? v.battery_percent : undefined;
  if (x === undefined || y === undefined) return prev && battery !== undefined ? { ...prev, battery } : prev;
  const heading = typeof v.odom_heading === 'number' ? v.odom_heading : typeof v.map_heading === 'number' ? v.map_heading : (prev?.heading ?? 0);
  const last = prev?.path.at(-1);
  const path = last && last[0] === x && last[1] === y ? (prev?.path ?? []) : [...(prev?.path ?? []), [x, y] as [number, number]].slice(-BODY_PATH);
  const distance = typeof v.odom_distance === 'number' ? v.odom_distance : prev?.distance;
  const charge = battery ?? prev?.battery;
  return { at, x, y, heading, path, ...(distance !== undefined ? { distance } : {}), ...(charge !== undefined ? { battery: charge } : {}) };
}

export function initialState(mode: string): SimState {
  return {
    mode,
    status: 'running',
    lastTransition: null,
    lastRefusal: null,
    turn: null,
    context: {},
    body: null,
    inputs: {},
    prompt: null,
    recall: null,
    answer: null,
    modelError: null,
    modelHealth: null,
    actions: [],
    hooks: [],
    streams: {},
    mcp: {},
    counters: { ticks: 0, late_ticks: 0, model_calls: 0, model_errors: 0, cu_spent: 0, cu_speech: 0, cu_recognition: 0 },
    calls: [],
    transcript: [],
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
  const times = (prev: Partial<ActionEntry>): Partial<ActionEntry> => ({
    queued_at: prev.queued_at ?? (e.state === 'queued' ? e.at : undefined),
    started_at: prev.started_at ?? (e.state === 'running' ? e.at : undefined),
    ended_at: TERMINAL.has(e.state) ? e.at : prev.ended_at,
  });
  const clean = (a: ActionEntry): ActionEntry => Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as unknown as ActionEntry;
  if (e.state !== 'queued') {
    const i = list.findIndex((a) => a.label === e.label && a.mode === e.mode && !TERMINAL.has(a.state));
    if (i >= 0) {
      const prev = list[i]!;
      const next = clean({ ...prev, ...e, value: e.value ?? prev.value, ...times(prev) });
      return [next, ...list.slice(0, i), ...list.slice(i + 1)].slice(0, MAX_ACTIONS);
    }
  }
  return [clean({ ...e, ...times({}) }), ...list].slice(0, MAX_ACTIONS);
}

/** The words of a speak value: `{sentence}` or a bare string. */
function sentenceOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const sentence = value && typeof value === 'object' ? (value as { sentence?: unknown }).sentence : undefined;
  return typeof sentence === 'string' ? sentence : undefined;
}

function addLine(list: TranscriptLine[], line: TranscriptLine): TranscriptLine[] {
  return [...list, line].slice(-MAX_TRANSCRIPT);
}

const STREAM_FIELDS = ['attempt', 'delay_ms', 'connections', 'sent_bytes', 'dropped_bytes', 'frames_sent', 'frames_dropped', 'cost_cu'] as const;

/** A stream event folded into its entry: counters are cumulative, so the newest value is the total. */
function applyStream(prev: StreamEntry | undefined, e: SimEvent): StreamEntry {
  const state = str(e.state);
  const entry: StreamEntry = { ...(prev ?? { kind: str(e.kind), input: str(e.input), history: [], reconnects: 0 }), at: e.at, state };
  if (state === 'connecting' && prev !== undefined && prev.state !== 'connecting') entry.reconnects = prev.reconnects + 1;
  for (const k of STREAM_FIELDS) if (typeof e[k] === 'number') entry[k] = e[k] as number;
  if (state !== 'backingOff') delete entry.delay_ms;
  entry.breaker = e.breaker === true;
  const reason = typeof e.reason === 'string' ? e.reason : typeof e.detail === 'string' ? e.detail : undefined;
  if (reason !== undefined) entry.reason = reason;
  if (typeof e.detail === 'string') entry.detail = e.detail;
  if (state === 'streaming' && prev?.state !== 'streaming') entry.streaming_since = e.at;
  // Counter updates repeat the state; only changes enter the history.
  if (prev?.state !== state)
    entry.history = [{ at: e.at, state, ...(reason !== undefined ? { reason } : {}) }, ...(prev?.history ?? [])].slice(0, MAX_STREAM_HISTORY);
  return entry;
}

/** Tool calls and text of an answer in a few words. */
function summaryOf(e: SimEvent): string {
  const calls = Array.isArray(e.tool_calls) ? (e.tool_calls as Array<{ name?: unknown }>).map((c) => String(c.name)) : [];
  const text = typeof e.text === 'string' && e.text ? `"${e.text.length > 60 ? `${e.text.slice(0, 59)}…` : e.text}"` : '';
  return [calls.join(', '), text].filter(Boolean).join(' ') || 'nothing to do';
}

/** How one kind of event changes the state: a new state, the input not modified. */
type Handler = (s: SimState, e: SimEvent) => SimState;

function modeChanged(s: SimState, e: SimEvent): SimState {
  const t: Transition = { at: e.at, from: str(e.from), to: str(e.to), trigger: str(e.trigger), reason: str(e.reason) };
  if (typeof e.rule_index === 'number') t.rule_index = e.rule_index;
  return { ...s, mode: t.to, lastTransition: t };
}

function hookRan(s: SimState, e: SimEvent): SimState {
  const h: HookEntry = { at: e.at, mode: str(e.mode), hook_type: str(e.hook_type), handler_type: str(e.handler_type), ok: e.ok === true };
  if (typeof e.error === 'string') h.error = e.error;
  if (e.cancelled === true) h.cancelled = true;
  if (typeof e.duration_ms === 'number') h.duration_ms = e.duration_ms;
  return { ...s, hooks: [h, ...s.hooks].slice(0, MAX_HOOKS) };
}

/** The last turn: its outcome and its stages' latencies, fastest first. */
function turnEnded(s: SimState, e: SimEvent): SimState {
  const raw = e.stages_ms && typeof e.stages_ms === 'object' ? (e.stages_ms as Record<string, unknown>) : {};
  const stages = Object.entries(raw)
    .filter((x): x is [string, number] => typeof x[1] === 'number')
    .sort((a, b) => a[1] - b[1]);
  return {
    ...s,
    turn: {
      at: e.at,
      mode: str(e.mode),
      outcome: str(e.outcome),
      origin: str(e.origin),
      streamed: e.streamed === true,
      sentences: num(e.sentences),
      spoken: num(e.spoken),
      stages,
    },
  };
}

function contextSet(s: SimState, e: SimEvent): SimState {
  const values = e.values && typeof e.values === 'object' ? (e.values as Record<string, unknown>) : {};
  const context = { ...s.context };
  for (const [name, value] of Object.entries(values)) context[name] = { at: e.at, value, source: str(e.source, '?') };
  return { ...s, context, body: bodyFrom(s.body, e.at, values) };
}

/** An input's newest text; a final one also enters the transcript as heard. */
function inputArrived(s: SimState, e: SimEvent): SimState {
  const inputs = { ...s.inputs, [str(e.input, 'input')]: { at: e.at, text: str(e.text), final: e.final === true, mode: str(e.mode) } };
  if (e.final !== true) return { ...s, inputs };
  return { ...s, inputs, transcript: addLine(s.transcript, { at: e.at, who: 'heard', source: str(e.input, 'input'), text: str(e.text) }) };
}

function recalled(s: SimState, e: SimEvent): SimState {
  const used = Array.isArray(e.used)
    ? (e.used as Array<Record<string, unknown>>).map((u) => {
        const entry: RecalledEntry = { kind: str(u.kind), source: str(u.source), score: num(u.score), text: str(u.text) };
        if (typeof u.person === 'string') entry.person = u.person;
        return entry;
      })
    : [];
  return { ...s, recall: { at: e.at, tick: num(e.tick), query: str(e.query), used, ...(typeof e.note === 'string' ? { note: e.note } : {}) } };
}

/** The model's answer, one more call on the timeline, and the counters of calls and cost. */
function modelAnswered(s: SimState, e: SimEvent): SimState {
  const calls = Array.isArray(e.tool_calls) ? (e.tool_calls as Array<{ name: string; arguments: unknown }>) : [];
  const answer: NonNullable<SimState['answer']> = {
    at: e.at,
    tick: num(e.tick),
    mode: str(e.mode),
    model: str(e.model),
    tool_calls: calls,
    latency_ms: num(e.latency_ms),
  };
  if (typeof e.text === 'string') answer.text = e.text;
  if (typeof e.cost_cu === 'number') answer.cost_cu = e.cost_cu;
  const c = s.counters;
  const call: ModelCall = {
    at: e.at,
    mode: answer.mode,
    tick: answer.tick,
    model: answer.model,
    latency_ms: answer.latency_ms,
    ok: true,
    summary: summaryOf(e),
  };
  if (answer.cost_cu !== undefined) call.cost_cu = answer.cost_cu;
  return {
    ...s,
    answer,
    calls: [call, ...s.calls].slice(0, MAX_CALLS),
    counters: { ...c, model_calls: c.model_calls + 1, cu_spent: c.cu_spent + num(e.cost_cu) },
  };
}

function modelFailed(s: SimState, e: SimEvent): SimState {
  const c = s.counters;
  // A failed call has no latency on the bus; it is drawn as a mark at the time it failed.
  const call: ModelCall = { at: e.at, mode: str(e.mode), tick: num(e.tick), model: str(e.model, 'model'), latency_ms: 0, ok: false, summary: str(e.error) };
  return {
    ...s,
    modelError: { at: e.at, error: str(e.error) },
    calls: [call, ...s.calls].slice(0, MAX_CALLS),
    counters: { ...c, model_calls: c.model_calls + 1, model_errors: c.model_errors + 1 },
  };
}

/** An action's new state; a face shown changes the face, a sentence spoken enters the transcript, a finished action's cost the counters. */
function actionChanged(s: SimState, e: SimEvent): SimState {
  const a: ActionEntry = { at: e.at, mode: str(e.mode), label: str(e.label), name: str(e.name), connector: str(e.connector), state: str(e.state) };
  if (e.value !== undefined) a.value = e.value;
  if (typeof e.error === 'string') a.error = e.error;
  if (typeof e.cost_cu === 'number') a.cost_cu = e.cost_cu;
  const actions = applyAction(s.actions, a);
  // The updated entry is first; its value survives from `queued` when later states omit it.
  const emotion = a.name === 'face' && (a.state === 'running' || a.state === 'done') ? emotionOf(actions[0]!.value) : undefined;
  const said = a.name === 'speak' && a.state === 'running' ? sentenceOf(actions[0]!.value) : undefined;
  const c = s.counters;
  return {
    ...s,
    actions,
    face: emotion === undefined ? s.face : { emotion, at: e.at },
    ...(said !== undefined ? { transcript: addLine(s.transcript, { at: e.at, who: 'said', source: a.mode, text: said }) } : {}),
    ...(a.cost_cu !== undefined && TERMINAL.has(a.state) ? { counters: { ...c, cu_speech: c.cu_speech + a.cost_cu } } : {}),
  };
}

function streamChanged(s: SimState, e: SimEvent): SimState {
  const key = `${str(e.kind)}:${str(e.input)}`;
  const prev = s.streams[key];
  const entry = applyStream(prev, e);
  // Recognition cost is cumulative per stream: the counter grows by what this stream added (a new stream starts from 0 again).
  const before = prev?.cost_cu ?? 0;
  const now = entry.cost_cu ?? before;
  const added = now >= before ? now - before : now;
  const c = s.counters;
  return { ...s, streams: { ...s.streams, [key]: entry }, ...(added ? { counters: { ...c, cu_recognition: c.cu_recognition + added } } : {}) };
}

function mcpChanged(s: SimState, e: SimEvent): SimState {
  const entry: SimState['mcp'][string] = { at: e.at, state: str(e.state) };
  if (typeof e.detail === 'string') entry.detail = e.detail;
  return { ...s, mcp: { ...s.mcp, [str(e.server)]: entry } };
}

/** The last safety event; an e-stop latches until a release. */
function safetyChanged(s: SimState, e: SimEvent): SimState {
  const kind = str(e.kind);
  const last = { at: e.at, kind, reason: str(e.reason), ...(typeof e.cause === 'string' ? { cause: e.cause } : {}) };
  const estop = kind === 'estop' ? { source: str(e.source), reason: str(e.reason), at: e.at } : kind === 'release' ? null : (s.safety?.estop ?? null);
  return { ...s, safety: { estop, last } };
}

/** A new error, or the newest one again (same source, same words but for numbers) counted as a repeat. */
function errorRaised(s: SimState, e: SimEvent): SimState {
  const next = { at: e.at, source: str(e.source), message: str(e.message) };
  const newest = s.errors[0];
  if (newest && newest.source === next.source && sameBarNumbers(newest.message, next.message)) {
    const folded = { ...next, repeats: (newest.repeats ?? 0) + 1, first: newest.first ?? newest.at };
    return { ...s, errors: [folded, ...s.errors.slice(1)] };
  }
  return { ...s, errors: [next, ...s.errors].slice(0, MAX_ERRORS) };
}

/** The handler of each event type the page shows. */
const HANDLERS: Record<string, Handler> = {
  'agent.started': (s, e) => ({ ...s, mode: str(e.mode, s.mode), status: 'running' }),
  'agent.stopping': (s) => ({ ...s, status: 'stopping' }),
  'agent.stopped': (s) => ({ ...s, status: 'stopped' }),
  'mode.changed': modeChanged,
  'mode.refused': (s, e) => ({ ...s, lastRefusal: { at: e.at, requested: str(e.requested), reason: str(e.reason) } }),
  hook: hookRan,
  tick: (s, e) => ({ ...s, counters: { ...s.counters, ticks: s.counters.ticks + 1, late_ticks: s.counters.late_ticks + num(e.late_skipped) } }),
  turn: turnEnded,
  context: contextSet,
  input: inputArrived,
  recall: recalled,
  prompt: (s, e) => ({ ...s, prompt: { at: e.at, tick: num(e.tick), mode: str(e.mode), text: str(e.prompt) } }),
  'model.answer': modelAnswered,
  model: (s, e) => ({
    ...s,
    modelHealth: { at: e.at, model: str(e.model, 'model'), state: str(e.state), ...(typeof e.reason === 'string' ? { reason: e.reason } : {}) },
  }),
  'model.error': modelFailed,
  action: actionChanged,
  stream: streamChanged,
  mcp: mcpChanged,
  safety: safetyChanged,
  error: errorRaised,
};

/** Applies one event; returns a new state (the input is not modified). Unknown event types are ignored. */
export function reduce(s: SimState, e: SimEvent): SimState {
  const handler = Object.hasOwn(HANDLERS, e.type) ? HANDLERS[e.type] : undefined;
  return handler ? handler(s, e) : s;
}
