// One tick of a mode: drain the inputs, let keyword rules see the text, fuse the prompt, ask the model, hand out its tool calls.
import type { Logger } from 'pino';
import type { ChatMessage, ToolDefinition } from '../../src/cloud/protocol.js';
import type { ActionConfig, AgentConfig, ModeConfig } from '../../src/config/schema.js';
import type { ActionHandle, McpHub, ToolsForMode } from '../../src/cortex/contracts.js';
import type { AgentBus } from '../../src/cortex/events.js';
import { fuse, promptActions, promptText, type FusedPrompt, type FuserInput } from '../../src/cortex/fuser.js';
import type { InputPlugin } from '../../src/cortex/input.js';
import type { LlmAnswer, LlmPlugin } from '../../src/cortex/llm.js';
import { answerText, lastPrompt } from '../../src/cortex/history.js';
import type { TurnStage } from '../../src/cortex/events.js';
import { actionForTool } from '../../src/cortex/tools.js';
import { WakeGate } from '../../src/cortex/wake.js';
import { descriptors, entryDescription } from '../../src/plugins/index.js';
import type { Plugins } from '../../src/cortex/plugins.js';
import { describeError } from '../../src/errors.js';
import type { TickRequest, TickResult } from './loop.js';
import type { InteractionRecord } from '../actions/interactions.js';
import { LiveHandout } from './live-handout.js';
import type { AssembledTurn, TurnPreparer } from './speculation.js';
import { type ActionSequence, AnswerOrder } from '../actions/ordering.js';
import { Turn } from './turn.js';
import type { Recalled } from '../../src/memory/recall.js';

/** A running input of the mode (its formatted buffer); the finals of a tick come with its request (the loop keeps them). */
export interface TickInput {
  plugin: InputPlugin;
  /** Finals of this input for this tick, read (never changed) by the tick; the agent's loop gives them in the request instead. */
  finals?: readonly string[];
}

export interface TickDeps {
  config: AgentConfig;
  modeName: string;
  mode: ModeConfig;
  inputs: readonly TickInput[];
  handles: () => readonly ActionHandle[];
  llm: LlmPlugin;
  hub?: McpHub;
  toolsForMode: ToolsForMode;
  /** Where action descriptions for the prompt come from; default the built-in descriptors. */
  plugins?: Pick<Plugins, 'descriptors'>;
  bus: AgentBus;
  logger: Logger;
  /**
   * Offers the tick's final texts to the mode machine's keyword rules; true when a transition fired
   * (the tick then ends without calling the model).
   */
  keywords: (text: string) => boolean | Promise<boolean>;
  /** Skip the model when no input has anything new, or nothing new that is a meaningful change (default true). */
  skipIdle: boolean;
  /** What the model saw of each input, and what counts as news: the loop's own gate (without one, every text is news to a fresh gate). */
  wake?: WakeGate;
  /** Most model rounds per tick when MCP tool results are fed back (default 3). */
  maxToolRounds: number;
  /** The mode's actions with the implicit ones (`remember_location`); default `mode.agent_actions`. */
  actions?: readonly ActionConfig[];
  /** Extra lines for the system message, read at each model call (e.g. the known places); undefined adds nothing. */
  context?: () => string | undefined;
  /**
   * The knowledge base and memory (src/memory/recall.ts): `remember` keeps what the tick heard tells (before
   * the keyword rules), `recall` gives its prompt lines (reported as a `recall` event). Absent: nothing recalled.
   */
  recall?: { remember(heard: string, summarise?: LlmPlugin['summarise']): string | undefined; recall(heard: string, note?: string): Recalled };
  /** Given one record per tick that called the model (`save_interactions`); absent, nothing is collected. */
  onInteraction?: (record: InteractionRecord) => void;
  /**
   * Aborted when the mode stops running (it starts exiting, or the agent stops): cancels the sentences
   * of answers still being spoken after their tick ended. Default: the tick's own signal.
   */
  lifetime?: AbortSignal;
  /** The turn prepared while the person spoke (prompt, and the early request in speculative mode): a tick with finals takes it if its prompt is the same. */
  prepared?: TurnPreparer<Assembled>;
  /** The mode run's sequence of actions (`action_execution_mode: sequential`: answers queue after each other). */
  sequence?: ActionSequence;
  now?: () => number;
}

/** The prompt of a tick and the tools of its first request. */
export interface Assembled {
  prompt: FusedPrompt;
  promptString: string;
  tools: ToolDefinition[];
}

/** What a prepared turn is keyed by: the input texts, the extra system lines and the tools of the tool servers. */
const turnKey = (deps: TickDeps, fused: readonly FuserInput[], extra: string | undefined): string =>
  JSON.stringify([fused, extra ?? null, (deps.hub?.tools() ?? []).map((t) => t.function.name)]);

/** The prompt and first tools of a tick for these input texts and extra system lines. */
function assembled(deps: TickDeps, fused: readonly FuserInput[], extra: string | undefined): Assembled {
  const actions = deps.actions ?? deps.mode.agent_actions;
  const hubTools = deps.hub?.tools() ?? [];
  const prompt = withContext(fuse(deps.config, deps.mode, [...fused], promptActions(actions, describeAction(deps))), extra);
  const tools = deps.toolsForMode([...actions], hubTools);
  return { prompt, promptString: promptText(prompt), tools };
}

/** What a tick sends for these input texts and extra system lines: the same key, the same request. */
export function assembleTurn(deps: TickDeps, fused: readonly FuserInput[], extra: string | undefined): AssembledTurn<Assembled> {
  const value = assembled(deps, fused, extra);
  return { key: turnKey(deps, fused, extra), value, request: { messages: [...value.prompt.messages], tools: value.tools } };
}

/** An answer of a tick as saved: one model call, or several rounds merged (texts joined, tool calls in order). */
type SavedAnswer = InteractionRecord['answer'] & { error?: string };
type SavedAction = InteractionRecord['actions'][number];

/** The prompt with `extra` appended to its system message. */
function withContext(prompt: FusedPrompt, extra: string | undefined): FusedPrompt {
  if (!extra?.trim()) return prompt;
  const system = `${prompt.system}\n\n${extra.trim()}`;
  return { ...prompt, system, messages: prompt.messages.map((m) => (m.role === 'system' ? { ...m, content: system } : m)) };
}

/** The speak action of a mode: by llm_label `speak`, else by name `speak`. */
export function speakHandle(handles: readonly ActionHandle[]): ActionHandle | undefined {
  return handles.find((h) => h.entry.llm_label === 'speak') ?? handles.find((h) => h.entry.name === 'speak');
}

/** Description of an action for the prompt: the action plugin's description. */
const describeAction = (deps: TickDeps) => (a: { name: string; config?: unknown }) => {
  const spec = (deps.plugins?.descriptors ?? descriptors).actions.get(a.name);
  return spec && entryDescription(spec, a.config);
};

/** What the inputs gave a tick: the texts to fuse, the finals heard, when speech ended, and each plugin's text (for the wake gate). */
interface Gathered {
  fused: FuserInput[];
  finals: string[];
  before: Partial<Record<TurnStage, number>>;
  texts: Array<[InputPlugin, string]>;
}

/** Drains the inputs: their formatted buffers, their finals and the voice inputs' turn marks. */
function gatherInputs(deps: TickDeps, req: TickRequest): Gathered {
  const gathered: Gathered = { fused: [], finals: [...(req.finals ?? [])], before: {}, texts: [] };
  const { fused, finals, before, texts } = gathered;
  for (const input of deps.inputs) {
    const text = input.plugin.formattedLatestBuffer();
    if (text !== undefined && text.trim()) fused.push({ descriptor: input.plugin.descriptor, text }), texts.push([input.plugin, text]);
    if (input.finals) finals.push(...input.finals);
    // Voice inputs say when the speech of these finals ended and when its transcript came (the turn's first stages).
    const marks = input.plugin.takeTurnMarks?.();
    if (marks?.speechEndAt !== undefined) before.speech_end = Math.min(before.speech_end ?? Infinity, marks.speechEndAt);
    if (marks?.finalAt !== undefined) before.final_transcript = Math.min(before.final_transcript ?? Infinity, marks.finalAt);
  }
  return gathered;
}

/** Tells the memory what was heard (before the keyword rules, so a name said with the word that switches the mode is kept too); returns its note. */
function rememberHeard(deps: TickDeps, heard: string): string | undefined {
  if (!deps.recall || !heard) return undefined;
  try {
    return deps.recall.remember(heard, deps.llm.summarise?.bind(deps.llm));
  } catch (err) {
    deps.logger.warn(`memory left out: ${describeError(err)}`);
    return undefined;
  }
}

/** The extra system lines of a tick: the mode's context, then what the knowledge base and the memory give for what was heard (a `recall` event). */
function promptExtra(deps: TickDeps, req: TickRequest, logger: Logger, heard: string, memoryNote: string | undefined, now: () => number): string | undefined {
  let extra: string | undefined;
  try {
    extra = deps.context?.();
  } catch (err) {
    logger.warn(`prompt context left out: ${describeError(err)}`);
  }
  if (!deps.recall || !heard) return extra;
  try {
    const recalled = deps.recall.recall(heard, memoryNote);
    // Joined as the mode's prepared turns join them (actors/modes/mode.ts), so a turn prepared on the same words is taken.
    if (recalled.block) extra = [extra, recalled.block].filter((p) => Boolean(p?.trim())).join('\n\n');
    deps.bus.emit({
      type: 'recall',
      at: now(),
      mode: deps.modeName,
      tick: req.seq,
      query: heard,
      used: recalled.used,
      ...(recalled.note ? { note: recalled.note } : {}),
    });
  } catch (err) {
    logger.warn(`knowledge and memory left out: ${describeError(err)}`);
  }
  return extra;
}

/** What the model rounds of one tick share: the tick, its turn and speech, what is saved, and the streams' signals. */
interface Rounds {
  deps: TickDeps;
  req: TickRequest;
  signal: AbortSignal;
  streamSignal: AbortSignal;
  logger: Logger;
  now: () => number;
  turn: Turn;
  speak: ActionHandle | undefined;
  say: (sentence: string) => void;
  saved: { answer: SavedAnswer; actions: SavedAction[] } | undefined;
  /** The turn prepared on the partials, taken by this tick (its early request is adopted by the first round). */
  early: ReturnType<TurnPreparer<Assembled>['take']>;
}

/** Asks the model, hands out its tool calls, and feeds MCP results back for up to maxToolRounds rounds; returns the first answer and how it ended. */
async function askRounds(
  r: Rounds,
  messages: ChatMessage[],
  firstTools: ToolDefinition[],
): Promise<{ first: LlmAnswer | undefined; outcome: 'answered' | 'error' | 'interrupted' }> {
  const { deps, req, signal, logger, now, turn, saved, early } = r;
  const actions = deps.actions ?? deps.mode.agent_actions;
  let first: LlmAnswer | undefined;
  for (let round = 0; round < Math.max(1, deps.maxToolRounds); round++) {
    signal.throwIfAborted();
    const tools: ToolDefinition[] = round === 0 ? firstTools : deps.toolsForMode([...actions], deps.hub?.tools() ?? []);
    const live = liveHandout(r);
    let answer: LlmAnswer;
    const adopt = round === 0 ? early?.adopt : undefined;
    turn.mark('request_sent', adopt && early?.sentAt !== undefined ? early.sentAt : now());
    try {
      answer = adopt ? await adopt(live, r.streamSignal) : await deps.llm.ask({ messages, tools }, r.streamSignal, live);
    } catch (err) {
      if (signal.aborted) throw err;
      if (turn.isInterrupted) {
        // A barge-in cut the answer short: what was said stands, nothing more is.
        logger.info('answer cut short by a barge-in');
        return { first, outcome: 'interrupted' };
      }
      modelFailed(r, err);
      return { first, outcome: 'error' };
    }
    first ??= answer;
    turn.model = answer.model;
    emitAnswer(deps, req, answer, now);
    if (saved) mergeAnswer(saved.answer, answer);
    if (turn.isInterrupted) break;
    const results = await handOut({ ...deps, logger }, answer, req.seq, signal, saved?.actions, { live, turn, say: r.say });
    if (results.length === 0 || round + 1 >= deps.maxToolRounds) break;
    // MCP results go back to the model, which may call more tools or answer.
    messages.push({
      role: 'assistant',
      content: answer.text ?? null,
      tool_calls: results.map((x) => ({ id: x.id, type: 'function' as const, function: { name: x.name, arguments: JSON.stringify(x.args ?? {}) } })),
    });
    for (const x of results) messages.push({ role: 'tool', tool_call_id: x.id, content: x.content });
  }
  return { first, outcome: 'answered' };
}

/** The handout of one round's answer as it streams: sentences to speak, commands to their actions, tool calls to the servers. */
function liveHandout({ deps, req, signal, logger, now, turn, speak, say, saved }: Rounds): LiveHandout {
  return new LiveHandout({
    handles: deps.handles(),
    speak,
    hub: deps.hub,
    turn,
    logger,
    say,
    dispatch: (handle, value) => (saved ? saved.actions.push(dispatchAndSee(deps, handle, value)) : handle.dispatch(value, 'model')),
    signal,
    tick: req.seq,
    // The governor hears the model is alive before the answer's first motion command (no text on it).
    progress: (stage) => deps.bus.emit({ type: 'model.progress', at: now(), mode: deps.modeName, tick: req.seq, stage }),
  });
}

/** A failed model call: logged, a `model.error` event with its kind, and kept in the saved interaction. */
function modelFailed({ deps, req, logger, now, saved }: Rounds, err: unknown): void {
  const error = describeError(err);
  logger.warn(`model call failed: ${error}`);
  deps.bus.emit({ type: 'model.error', at: now(), mode: deps.modeName, tick: req.seq, error, model: deps.llm.type, kind: errorKind(err) });
  if (saved) saved.answer.error = error;
}

/** The model's answer on the bus (`model.answer`: its text, tool calls, latency and cost). */
function emitAnswer(deps: TickDeps, req: TickRequest, answer: LlmAnswer, now: () => number): void {
  deps.bus.emit({
    type: 'model.answer',
    at: now(),
    mode: deps.modeName,
    tick: req.seq,
    model: answer.model,
    ...(answer.text ? { text: answer.text } : {}),
    tool_calls: answer.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
    latency_ms: answer.latencyMs,
    ...(answer.costCu !== undefined ? { cost_cu: answer.costCu } : {}),
  });
}

/** The turn's end for the history: an answer cut by a barge-in or a mode switch is kept as what was actually said. */
function reviseWhenCut(deps: TickDeps, speak: ActionHandle | undefined, first: LlmAnswer | undefined, remembered: ReturnType<typeof lastPrompt>) {
  return (said: string[], unsaid: string[]): void => {
    if (!unsaid.length || remembered === undefined || !deps.llm.reviseAnswer || !speak) return;
    const spoken = { name: speak.entry.llm_label, arguments: { sentence: said.join(' ') } };
    // An answer cut while it streamed was never complete: what it said is all there is of it.
    const calls = first ? first.toolCalls.map((c) => (actionForTool([speak], c.name) ? { ...c, arguments: spoken.arguments } : c)) : [spoken];
    deps.llm.reviseAnswer(
      remembered,
      `${answerText({ ...(first?.text ? { text: first.text } : {}), toolCalls: calls })} (interrupted; not said: ${unsaid.join(' ')})`,
    );
  };
}

/** The order the answer's commands reach their actions in, as the mode's action_execution_mode says. */
function answerOrderOf(given: TickDeps, signal: AbortSignal): AnswerOrder {
  return new AnswerOrder({
    mode: given.mode.action_execution_mode ?? 'concurrent',
    dependencies: given.mode.action_dependencies ?? {},
    ...(given.sequence ? { sequence: given.sequence } : {}),
    lifetime: given.lifetime ?? signal,
    bus: given.bus,
    modeName: given.modeName,
  });
}

/** Runs one tick; returns whether the model was called. Never throws for a model or tool failure (reported on the bus). */
export async function runTick(given: TickDeps, req: TickRequest, signal: AbortSignal): Promise<TickResult> {
  const order = answerOrderOf(given, signal);
  const deps: TickDeps = { ...given, handles: () => order.wrap(given.handles()) };
  const now = deps.now ?? Date.now;
  const { fused, finals, before, texts } = gatherInputs(deps, req);
  const heard = finals.join('\n').trim();
  const memoryNote = rememberHeard(deps, heard);
  if (finals.length) {
    const switched = deps.keywords(finals.join('\n'));
    if (switched === true || (switched !== false && (await switched))) return { calledModel: false };
  }
  // Only a meaningful change of some input calls the model (each input's measure: src/cortex/wake.ts).
  const gate = deps.wake ?? new WakeGate();
  if (deps.skipIdle && !texts.some(([plugin, text]) => gate.isNews(plugin, text))) return { calledModel: false };
  for (const [plugin, text] of texts) gate.saw(plugin, text);

  // Every line logged from here on names the tick (the mode is bound by the runtime's logger).
  const logger = deps.logger.child({ tick: req.seq });
  const extra = promptExtra(deps, req, logger, heard, memoryNote, now);
  // A tick woken by a final takes what was prepared on the partials if the prompt is exactly the same.
  const early = req.finals?.length && deps.prepared ? deps.prepared.take(turnKey(deps, fused, extra)) : undefined;
  // Built here without the key and request a prepared turn needs (the key alone is a JSON text of every input).
  const { prompt, promptString, tools: firstTools } = early?.value ?? assembled(deps, fused, extra);
  deps.bus.emit({ type: 'prompt', at: now(), mode: deps.modeName, tick: req.seq, prompt: promptString });
  const saved: Rounds['saved'] = deps.onInteraction ? { answer: { tool_calls: [] }, actions: [] } : undefined;

  // The stream stops with the tick, and on a barge-in (the turn's sentences were interrupted): one
  // listener and the turn's callback rather than AbortSignal.any, which alone cost a sixth of the
  // runtime's share of a tick.
  const stream = new AbortController();
  const stopStream = () => stream.abort(signal.reason);
  const lifetime = deps.lifetime ?? signal;
  const turn = new Turn({ bus: deps.bus, logger, mode: deps.modeName, tick: req.seq, lifetime, before, now, onInterrupted: (reason) => stream.abort(reason) });
  const speak = speakHandle(deps.handles());
  const say = (sentence: string) => {
    if (!speak) return;
    const spokenBefore = turn.spokenCount;
    turn.speak(speak, sentence);
    if (saved && turn.spokenCount > spokenBefore) saved.actions.push({ label: speak.entry.llm_label, value: { sentence }, state: 'queued' });
  };
  if (signal.aborted) stopStream();
  signal.addEventListener('abort', stopStream, { once: true });
  let ended: Awaited<ReturnType<typeof askRounds>>;
  try {
    const rounds: Rounds = { deps, req, signal, streamSignal: stream.signal, logger, now, turn, speak, say, saved, early };
    ended = await askRounds(rounds, [...prompt.messages], firstTools);
  } catch (err) {
    // The tick was aborted (the mode stops): the turn ends with it; its sentences are cancelled by the lifetime.
    order.close();
    void turn.finish('interrupted');
    throw err;
  } finally {
    signal.removeEventListener('abort', stopStream);
  }
  order.close();
  if (saved) deps.onInteraction!({ mode: deps.modeName, tick: req.seq, prompt: promptString, answer: saved.answer, actions: saved.actions });
  // The history keeps what was actually said: sentences cut by a barge-in or a mode switch are not in it.
  void turn.finish(ended.outcome, reviseWhenCut(deps, speak, ended.first, lastPrompt(prompt.messages)));
  return { calledModel: true };
}

/** The metrics label of a failed model call: `timeout`, `http_<status>`, `network`, or `error`. */
function errorKind(err: unknown): string {
  const e = err as { name?: string; status?: unknown; code?: unknown };
  if (e?.name === 'TimeoutError' || e?.code === 'timeout' || /timed? ?out/i.test(describeError(err))) return 'timeout';
  if (typeof e?.status === 'number') return `http_${e.status}`;
  if (e?.name === 'CloudNetworkError') return 'network';
  return 'error';
}

function mergeAnswer(into: SavedAnswer, answer: LlmAnswer): void {
  into.model = answer.model;
  if (answer.text) into.text = into.text ? `${into.text}\n${answer.text}` : answer.text;
  into.tool_calls.push(...answer.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })));
  into.latency_ms = (into.latency_ms ?? 0) + answer.latencyMs;
}

/**
 * Dispatches to `handle` and returns what became of the command at once: `queued` (or `running`), or
 * `failed`/`dropped` with the reason. Dispatch reports synchronously on the bus, so the first `action`
 * event of this label during the call is this command's.
 */
function dispatchAndSee(deps: TickDeps, handle: ActionHandle, value: unknown): SavedAction {
  let seen: SavedAction | undefined;
  const sub = deps.bus.events$.subscribe((e) => {
    if (!seen && e.type === 'action' && e.label === handle.entry.llm_label && e.mode === deps.modeName) {
      seen = { label: e.label, value: e.value, state: e.state, ...(e.error !== undefined ? { error: e.error } : {}) };
    }
  });
  try {
    handle.dispatch(value, 'model');
  } finally {
    sub.unsubscribe();
  }
  return seen ?? { label: handle.entry.llm_label, value, state: 'queued' };
}

interface ToolResult {
  id: string;
  name: string;
  args: unknown;
  content: string;
}

/** What a streamed answer already handed out, and the turn that speaks. */
interface Streamed {
  live: LiveHandout;
  turn: Turn;
  say: (sentence: string) => void;
}

/**
 * Hands an answer out: action tool calls to their handles (queued per the action's policy, never
 * awaited), MCP tool calls to the hub (awaited, results returned for the next round), unknown names
 * logged and dropped, and plain text to speak when no speak call was made and the mode can speak.
 * Calls a streamed answer already handed out while it arrived are skipped (their MCP results are
 * awaited here). Speech goes through the turn: a speak call not streamed is one sentence, as written.
 */
async function handOut(
  deps: TickDeps,
  answer: LlmAnswer,
  tick: number,
  signal: AbortSignal,
  saved: SavedAction[] | undefined,
  streamed: Streamed,
): Promise<ToolResult[]> {
  const handles = deps.handles();
  const results: ToolResult[] = [];
  let spoke = false;
  const mcpCalls: Array<Promise<void>> = [];
  const speak = speakHandle(handles);
  const { live, turn, say } = streamed;
  const dispatch = (handle: ActionHandle, value: unknown) => {
    live.dispatched.add(handle.entry.llm_label);
    turn.watchActions(() => live.dispatched);
    if (saved) saved.push(dispatchAndSee(deps, handle, value));
    else handle.dispatch(value, 'model');
  };
  answer.toolCalls.forEach((call, i) => {
    const handle = actionForTool(handles, call.name);
    if (handle && handle === speak) spoke = true;
    if (live.handled.has(i)) return;
    if (handle) {
      const sentence = (call.arguments as { sentence?: unknown } | undefined)?.sentence;
      if (handle === speak && typeof sentence === 'string' && sentence.trim()) say(sentence);
      else dispatch(handle, call.arguments);
      return;
    }
    if (deps.hub?.has(call.name)) {
      const id = call.id ?? `call_${tick}_${i}`;
      mcpCalls.push(
        deps.hub.call(call.name, call.arguments, signal).then(
          (content) => {
            results.push({ id, name: call.name, args: call.arguments, content });
            saved?.push({ label: call.name, value: call.arguments, state: 'done' });
          },
          (err) => {
            results.push({ id, name: call.name, args: call.arguments, content: `error: ${describeError(err)}` });
            saved?.push({ label: call.name, value: call.arguments, state: 'failed', error: describeError(err) });
          },
        ),
      );
      return;
    }
    deps.logger.warn({ tool: call.name }, `model called unknown tool "${call.name}": dropped`);
    deps.bus.emit({ type: 'error', at: Date.now(), source: 'model', message: `unknown tool "${call.name}" dropped` });
    saved?.push({ label: call.name, value: call.arguments, state: 'dropped', error: 'unknown tool' });
  });
  if (!spoke && answer.text?.trim() && speak) say(answer.text.trim());
  for (const r of await Promise.all(live.early)) {
    results.push({ id: r.id, name: r.name, args: r.args, content: r.content });
    saved?.push({ label: r.name, value: r.args, state: r.ok ? 'done' : 'failed', ...(r.ok ? {} : { error: r.content.replace(/^error: /, '') }) });
  }
  await Promise.all(mcpCalls);
  return results;
}
