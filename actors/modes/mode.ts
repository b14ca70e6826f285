// The actor of one mode (`mode:<name>`): its actions for the whole mode; its inputs, model, tool servers and loop while it runs.
import type { Logger } from 'pino';
import { defer, of, type Observable } from 'rxjs';
import { assign, enqueueActions, fromCallback, raise, sendParent, sendTo, setup, type AnyActorRef } from 'xstate';
import type { CloudClient } from '../../src/cloud/client.js';
import type { ActionConfig, AgentConfig, LoadedConfig, ModeConfig } from '../../src/config/schema.js';
import type { ActionHandle, ToolsForMode } from '../../src/cortex/contracts.js';
import type { AgentBus } from '../../src/cortex/events.js';
import type { LlmPlugin } from '../../src/cortex/llm.js';
import type { Plugins } from '../../src/cortex/plugins.js';
import type { MediaTap } from '../../src/cortex/input.js';
import type { BrowserAudio } from '../../src/cortex/browser-audio.js';
import type { PositionBoard } from '../../src/cortex/positions.js';
import type { BodyBoard } from '../../src/cortex/bodies.js';
import type { McpOptions } from '../../src/cortex/mcp.js';
import { historyFileOf } from '../../src/cortex/history-store.js';
import { describeError } from '../../src/errors.js';
import { actionLogic, handleOf, type ActionActorRef } from '../actions/action.js';
import type { ReportDeps } from '../actions/command-queue.js';
import type { InteractionLog } from '../actions/interactions.js';
import { implicitActions, LocationStore } from '../actions/locations.js';
import type { Recall } from '../../src/memory/recall.js';
import { inputIds, inputLogic, type InputLogic, type InputParentEvent, type InputSlot } from '../inputs/input-actor.js';
import { cortexLoopLogic, type TickReport } from '../cortex/loop.js';
import { mcpHub, mcpServerLogic, mcpSessionInput, type McpBoard } from '../mcp/mcp.js';
import type { Clock } from './types.js';
import { assembleTurn, runTick, speakHandle, type Assembled } from '../cortex/tick.js';
import { TurnPreparer } from '../cortex/speculation.js';
import { ActionSequence } from '../actions/ordering.js';
import { backgroundIds, backgroundsLogic } from '../backgrounds/supervisor.js';
import { WakeGate } from '../../src/cortex/wake.js';

/** What every mode actor gets from the agent. */
export interface ModeActorDeps {
  loaded: LoadedConfig;
  /** The concrete plugins of this configuration (resolved before the agent starts); lookups throw for a type it does not use. */
  plugins: Plugins;
  bus: AgentBus;
  logger: Logger;
  clock: Clock;
  cloud?: CloudClient;
  stateDir: string;
  /** Console connector output (the terminal view, or nothing). */
  write: (line: string) => void;
  toolsForMode: ToolsForMode;
  /** After every tick (events, metrics, watchdog). */
  onTick: (mode: string, report: TickReport) => void;
  /** Most model rounds per tick when MCP results are fed back. */
  maxToolRounds: number;
  /** The agent's interaction log (one per agent), for modes with `save_interactions`. */
  interactions: () => InteractionLog;
  /** Given the asynchronous stops of what stopping actors release (connectors, plugins), so the agent can wait for them. */
  track?: (closing: Promise<unknown>) => void;
  mcp?: McpOptions;
  /** Copies of the media inputs send and hear (recording, live view). */
  media?: MediaTap;
  /** The browser voice link (WebSim's microphone in, speech out). */
  browserAudio?: BrowserAudio;
  /** The agent's newest GPS position (GPS inputs publish it, remember_location reads it). */
  positions?: PositionBoard;
  /** The robot's bodies in this process (the body connector and BodyInput share one). */
  bodies?: BodyBoard;
  /** The prompt line that says motion is disabled (e-stop, stopping, a mode without motion), read at each model call. */
  safetyNotice?: (mode: string) => string | undefined;
  /** The knowledge base and memory of the agent (src/memory/recall.ts), when the configuration has either. */
  recall?: Recall;
  /** The input logic the modes run their inputs with (one per agent, so the agent finds their plugins too); default: one per mode. */
  inputs?: InputLogic;
}

/** The actions of a mode: its `agent_actions`, then the ones its flags add (`remember_locations`). */
export function modeActions(mode: ModeConfig): ActionConfig[] {
  return [...mode.agent_actions, ...implicitActions(mode)];
}

/**
 * The options a model plugin is created with: its `config` block over the entry-level `agent_name`
 * and `history_length` that the spec's Model entry allows beside it. When both places set a field,
 * `config` wins: it is the plugin's own block and where real configurations put these fields, so the
 * entry-level value acts as a default.
 */
export function llmOptions(entry: NonNullable<ModeConfig['cortex_llm']>): Record<string, unknown> {
  const top: Record<string, unknown> = {};
  if (entry.agent_name !== undefined) top.agent_name = entry.agent_name;
  if (entry.history_length !== undefined) top.history_length = entry.history_length;
  return { ...top, ...((entry.config as Record<string, unknown> | undefined) ?? {}) };
}

/** `cortex_llm.config.skip_idle` (default true): a tick with no new input does not call the model. */
export function skipIdleOf(mode: ModeConfig, global?: ModeConfig['cortex_llm']): boolean {
  const v = ((mode.cortex_llm ?? global)?.config as Record<string, unknown> | undefined)?.skip_idle;
  return typeof v === 'boolean' ? v : true;
}

/** Most typed lines kept while a mode is not running yet (its on_entry hooks run). */
const PENDING_TEXT = 20;

/** The mode actor's data. What one run holds (model, lifetime, tool hub) is in its `Run`, outside the snapshot. */
interface ModeCtx {
  pendingText: string[];
}

/** What one run of a mode (one stay in `running`) owns: made on entry, released when it ends (the `model` child's stop). */
interface Run {
  llm: LlmPlugin;
  /** Aborted when `running` ends: cancels what answers still have queued (their sentences). */
  lifetime: AbortController;
  /** The tool hub, told their links by the run's `mcp:<server>` actors. */
  hub: McpBoard;
}

type ModeEv = { type: 'mode.run' } | { type: 'mode.standby' } | { type: 'mode.text'; text: string } | { type: 'mode.flushText' } | InputParentEvent;

/** Owns something that must be released when its actor stops (XState runs no exit actions then). */
const owner = fromCallback<{ type: 'none' }, { onStop: () => void }>(
  ({ input }) =>
    () =>
      input.onStop(),
);

/** The running parts of a mode actor, read from its children: what a tick and the hooks use. */
export interface ModeParts {
  handles(): ActionHandle[];
  handle(labelOrName: string): ActionHandle | undefined;
  inputs(): InputSlot[];
}

/** The system id of an actor of mode `mode` (`mode:<mode>/action:speak`, `mode:<mode>/input:TextInput`): unique in the agent, stable across entries. */
export const modeMemberId = (mode: string, id: string): string => `mode:${mode}/${id}`;

/** Anything that has the actor system (an actor ref, the agent's root). */
type HasSystem = Pick<AnyActorRef, 'system'>;

/**
 * The parts of mode `mode`'s running actor, addressed through the actor system by system id. `reports`
 * is where a command sent to an action that has stopped is reported dropped.
 */
export function modeParts(
  at: HasSystem,
  mode: string,
  actions: readonly ActionConfig[],
  inputIdsOfMode: readonly string[],
  inputs: Pick<InputLogic, 'listeningSlotOf'>,
  reports: Omit<ReportDeps, 'mode'>,
): ModeParts {
  const cache = new WeakMap<AnyActorRef, ActionHandle>();
  const get = (id: string) => at.system.get(modeMemberId(mode, id)) as AnyActorRef | undefined;
  const handleFor = (entry: ActionConfig): ActionHandle | undefined => {
    const ref = get(`action:${entry.llm_label}`);
    if (!ref) return undefined;
    let h = cache.get(ref);
    if (!h) cache.set(ref, (h = handleOf(ref as ActionActorRef, entry, { ...reports, mode })));
    return h;
  };
  return {
    handles: () => actions.map(handleFor).filter((h): h is ActionHandle => h !== undefined),
    handle: (label) => {
      const entry = actions.find((a) => a.llm_label === label) ?? actions.find((a) => a.name === label);
      return entry ? handleFor(entry) : undefined;
    },
    inputs: () => {
      const out: InputSlot[] = [];
      for (const id of inputIdsOfMode) {
        const ref = get(id);
        const slot = ref && inputs.listeningSlotOf(ref);
        if (slot) out.push(slot);
      }
      return out;
    },
  };
}

/** What the parts of one mode's logic share: its names, configuration and services, and the runs of its actors. */
interface ModeShape {
  name: string;
  config: AgentConfig;
  mode: ModeConfig;
  deps: ModeActorDeps;
  logger: Logger;
  actions: ActionConfig[];
  /** The actor ids of the mode's inputs, in listing order. */
  ids: string[];
  /** The input logic the mode runs its inputs with. */
  inputs: InputLogic;
  /**
   * The run of each actor of this logic now in `running`, by actor: the mode actor owns it (it is made
   * in its entry and released by its `model` child's stop), and its children get what they need of it
   * through their input, so no context holds the model or the hub.
   */
  runs: WeakMap<AnyActorRef, Run>;
  /** The known places, for a mode with `remember_locations`. */
  locations: LocationStore | undefined;
  /** A failure of a part of the mode: logged and an `error` event. */
  report: (source: string, message: string) => void;
}

/** The run of a mode actor in `running`; throws outside it. */
function runOf(m: ModeShape, self: AnyActorRef): Run {
  const run = m.runs.get(self);
  if (!run) throw new Error(`mode ${m.name}: no run (read outside \`running\`)`);
  return run;
}

/** Where the mode's action reports go: the bus and the mode's logger. */
const reportsOf = (m: ModeShape): Omit<ReportDeps, 'mode'> => ({ bus: m.deps.bus, logger: m.logger });

/** What every action actor of the mode gets (ActionHandleDeps). */
function actionDepsOf({ deps, logger, name }: ModeShape) {
  return {
    logger,
    bus: deps.bus,
    mode: name,
    stateDir: deps.stateDir,
    write: deps.write,
    plugins: deps.plugins,
    ...(deps.cloud ? { cloud: deps.cloud } : {}),
    ...(deps.browserAudio ? { browserAudio: deps.browserAudio } : {}),
    ...(deps.positions ? { positions: deps.positions } : {}),
    ...(deps.bodies ? { bodies: deps.bodies } : {}),
    ...(deps.media ? { media: deps.media } : {}),
  };
}

/** The model of one run of the mode; a model that cannot be made is reported and answers every call with why. */
function createLlm(m: ModeShape): LlmPlugin {
  const { deps, logger, name } = m;
  const llmEntry = m.mode.cortex_llm ?? m.config.cortex_llm;
  try {
    if (!llmEntry) throw new Error('no cortex_llm in the mode or the configuration');
    return deps.plugins.llm(llmEntry.type).create(llmOptions(llmEntry), {
      logger,
      cloud: deps.cloud!,
      historyFile: historyFileOf(deps.stateDir, deps.loaded.configName, name),
      report: (r) => deps.bus.emit({ type: 'model', at: Date.now(), mode: name, ...r }),
    });
  } catch (err) {
    const message = `model ${llmEntry?.type ?? '(none)'} not started: ${describeError(err)}`;
    m.report('model', message);
    return { type: 'unavailable', ask: async () => Promise.reject(new Error(message)) };
  }
}

/** The speak action's busy$ (mutes the microphone while the robot talks), looked up when an input listens. */
function speakerOf(parts: ModeParts): { busy$: Observable<boolean>; interrupt: () => void } {
  return {
    busy$: defer(() => speakHandle(parts.handles())?.busy$ ?? of(false)),
    interrupt: () => speakHandle(parts.handles())?.interrupt(),
  };
}

/** The mode's `input:<type>` children while it runs: each makes its plugin with the mode's services and the speaker. */
function inputInvocations(m: ModeShape) {
  const { deps, logger, name, ids } = m;
  return m.mode.agent_inputs.map((entry, i) => ({
    id: ids[i]!,
    systemId: modeMemberId(name, ids[i]!),
    src: 'input' as const,
    input: ({ self }: { self: AnyActorRef }) => {
      const speaker = speakerOf(modeParts(self, name, m.actions, ids, m.inputs, reportsOf(m)));
      return {
        id: ids[i]!,
        type: entry.type,
        mode: name,
        bus: deps.bus,
        logger: logger.child({ input: entry.type }),
        ...(deps.track ? { track: deps.track } : {}),
        create: (callbacks: object) =>
          deps.plugins.input(entry.type).create(entry.config ?? {}, {
            logger: logger.child({ input: entry.type }),
            stateDir: deps.stateDir,
            // Inputs stop through their actor; this signal is for plugins that want to know they are done.
            signal: new AbortController().signal,
            ...(deps.cloud ? { cloud: deps.cloud } : {}),
            speakerBusy$: speaker.busy$,
            interruptSpeaker: speaker.interrupt,
            ...(deps.media ? { media: deps.media } : {}),
            ...(deps.browserAudio ? { browserAudio: deps.browserAudio } : {}),
            ...(deps.positions ? { positions: deps.positions } : {}),
            ...(deps.bodies ? { bodies: deps.bodies } : {}),
            ...(deps.loaded.config.lidar ? { lidar: deps.loaded.config.lidar } : {}),
            ...callbacks,
          }),
      };
    },
  }));
}

/** The mode's context producers, under one supervisor (actors/backgrounds/supervisor.ts): its logic and, when there are any, its invocation. */
function backgroundsOf(m: ModeShape) {
  const { deps, logger, name } = m;
  const backgrounds = m.mode.backgrounds ?? [];
  const invoke = backgrounds.length ? [{ id: 'backgrounds', systemId: modeMemberId(name, 'backgrounds'), src: 'backgrounds' as const }] : [];
  const logic = backgroundsLogic(
    backgrounds.map((entry, i) => {
      const id = backgroundIds(backgrounds.map((b) => b.type))[i]!;
      const log = logger.child({ background: entry.type });
      return {
        id,
        type: entry.type,
        mode: name,
        bus: deps.bus,
        logger: log,
        ...(deps.track ? { track: deps.track } : {}),
        create: (callbacks: object) =>
          deps.plugins.input(entry.type).create(entry.config ?? {}, {
            logger: log,
            stateDir: deps.stateDir,
            signal: new AbortController().signal,
            ...(deps.cloud ? { cloud: deps.cloud } : {}),
            ...(deps.media ? { media: deps.media } : {}),
            ...(deps.positions ? { positions: deps.positions } : {}),
            ...(deps.bodies ? { bodies: deps.bodies } : {}),
            ...(deps.loaded.config.lidar ? { lidar: deps.loaded.config.lidar } : {}),
            ...callbacks,
          }),
      };
    }),
  );
  return { invoke, logic };
}

/** The mode's `mcp:<server>` children while it runs: each tells the run's tool hub its link. */
function mcpInvocations(m: ModeShape) {
  const { deps, logger, name } = m;
  return m.mode.mcp_servers.map((server) => ({
    id: `mcp:${server.name}`,
    systemId: modeMemberId(name, `mcp:${server.name}`),
    src: 'mcp' as const,
    input: ({ self }: { self: AnyActorRef }) =>
      mcpSessionInput({
        config: server,
        logger,
        bus: deps.bus,
        ...(deps.mcp ? { options: deps.mcp } : {}),
        ...(deps.track ? { track: deps.track } : {}),
        onLink: runOf(m, self).hub.linkOf(server.name),
      }),
  }));
}

/** Starts a run of the mode actor: its tool hub (servers in listing order, so the first listed wins a name clash), model and lifetime. */
function startRun(m: ModeShape, self: AnyActorRef): void {
  const hub = mcpHub();
  for (const server of m.mode.mcp_servers) hub.linkOf(server.name);
  m.runs.set(self, { llm: createLlm(m), lifetime: new AbortController(), hub });
}

/** The `model` child's input: its stop ends the run (aborts its lifetime, stops the model, forgets the run). */
function endOfRun(m: ModeShape, self: AnyActorRef): { onStop: () => void } {
  const run = runOf(m, self);
  return {
    onStop: () => {
      run.lifetime.abort(new Error('mode stopped running'));
      stopLlm(run.llm, m.report);
      if (m.runs.get(self) === run) m.runs.delete(self);
    },
  };
}

/** What one run's ticks keep besides the run: what the model saw, the answers' sequence, the keyword offer and the prepared turn. */
interface TickRun {
  wake: WakeGate;
  sequence: ActionSequence;
  keywords: (text: string) => Promise<boolean>;
  prepared: TurnPreparer<Assembled>;
}

/** The mode's tick dependencies: what runTick is given at each tick of a run (its inputs and actions read at that moment). */
function tickDepsOf(m: ModeShape, run: Run, parts: ModeParts, t: TickRun): Parameters<typeof runTick>[0] {
  const { deps, mode, name } = m;
  const locations = m.locations;
  const interactions = mode.save_interactions ? deps.interactions : undefined;
  const hub = m.mode.mcp_servers.length > 0 ? run.hub : undefined;
  return {
    config: m.config,
    modeName: name,
    mode,
    inputs: parts.inputs(),
    handles: () => parts.handles(),
    llm: run.llm,
    ...(hub ? { hub } : {}),
    toolsForMode: deps.toolsForMode,
    bus: deps.bus,
    logger: m.logger,
    keywords: t.keywords,
    wake: t.wake,
    sequence: t.sequence,
    skipIdle: skipIdleOf(mode, m.config.cortex_llm),
    maxToolRounds: deps.maxToolRounds,
    actions: m.actions,
    ...(locations || deps.safetyNotice ? { context: () => promptContext(locations?.describe(), deps.safetyNotice?.(name)) } : {}),
    ...(interactions ? { onInteraction: (record) => void interactions().append(record) } : {}),
    ...(deps.recall ? { recall: deps.recall } : {}),
    lifetime: run.lifetime.signal,
    prepared: t.prepared,
  };
}

/** The loop's input for a run of mode actor `self`: its rate and clock, and each tick run with the mode's tick dependencies. */
function loopInput(m: ModeShape, self: AnyActorRef) {
  const { deps, mode, name } = m;
  const parts = modeParts(self, name, m.actions, m.ids, m.inputs, reportsOf(m));
  const run = runOf(m, self);
  let offers = 0;
  const shared = {
    // What the model saw of each input: this run's own (plugins are new each run, so nothing carries over).
    wake: new WakeGate(),
    // One sequence per run: a sequential mode's answers run after each other.
    sequence: new ActionSequence(),
    keywords: (text: string) => offerKeywords(self, name, `${self.sessionId}:${++offers}`, text),
  };
  const tickDeps = () => tickDepsOf(m, run, parts, { ...shared, prepared });
  // The turn prepared on partial transcripts (and, with an input's `speculative` setting, asked early).
  const prepared: TurnPreparer<Assembled> = new TurnPreparer<Assembled>({
    llm: run.llm,
    logger: m.logger,
    speculative: (id) => (mode.agent_inputs[m.ids.indexOf(id)]?.config as { speculative?: unknown } | undefined)?.speculative === true,
    // Only that input's text: a final's tick with other inputs' news has another prompt and prepares nothing.
    assemble: (id, text) => {
      const plugin = parts.inputs().find((i) => i.id === id)?.plugin;
      const buffer = plugin?.bufferIf?.(text);
      if (!plugin || buffer === undefined) return undefined;
      const d = tickDeps();
      const recalled = deps.recall?.peek(text).block;
      return assembleTurn(d, [{ descriptor: plugin.descriptor, text: buffer }], promptContext(d.context?.(), recalled));
    },
  });
  run.lifetime.signal.addEventListener('abort', () => prepared.drop('the mode stopped'), { once: true });
  return {
    hertz: mode.hertz,
    clock: deps.clock,
    onTick: (r: TickReport) => deps.onTick(name, r),
    onPartial: (id: string, text: string) => prepared.partial(id, text),
    tick: (req: Parameters<typeof runTick>[1], signal: AbortSignal) => runTick(tickDeps(), req, signal),
  };
}

/** The shape of mode `name`'s logic: its configuration, services, actions and input ids, and the runs of its actors. */
function modeShapeOf(name: string, deps: ModeActorDeps): ModeShape {
  const config: AgentConfig = deps.loaded.config;
  const mode = config.modes[name]!;
  const logger = deps.logger.child({ mode: name });
  return {
    name,
    config,
    mode,
    deps,
    logger,
    actions: modeActions(mode),
    ids: inputIds(mode.agent_inputs.map((i) => i.type)),
    inputs: deps.inputs ?? inputLogic(),
    runs: new WeakMap(),
    locations: mode.remember_locations ? new LocationStore(deps.stateDir) : undefined,
    report: (source, message) => {
      logger.warn(message);
      deps.bus.emit({ type: 'error', at: Date.now(), source, message });
    },
  };
}

/**
 * The logic of mode `name`'s actor. Its children for the whole mode: one `action:<llm_label>` per
 * action (the hooks of entry and exit use them). In `running` (tag `running`, between the parent's
 * `mode.run` and `mode.standby`): one `input:<type>` per input, the model (`model`), one
 * `mcp:<server>` per tool server and the cortex loop (`loop`). A final input wakes the loop; context
 * values from inputs go up to the mode machine; typed text goes to the first input that accepts it
 * (text typed while the mode is not running yet waits, at most 20 lines).
 */
export function createModeLogic(name: string, deps: ModeActorDeps) {
  const m = modeShapeOf(name, deps);
  const { mode, actions, ids } = m;
  const textInput = ids.find((_, i) => deps.plugins.descriptors.inputs.get(mode.agent_inputs[i]!.type)?.typedText === true);
  const actionDeps = actionDepsOf(m);
  const backgrounds = backgroundsOf(m);
  return setup({
    types: { context: {} as ModeCtx, events: {} as ModeEv },
    actors: { action: actionLogic(), input: m.inputs.logic, loop: cortexLoopLogic(), mcp: mcpServerLogic(), owner, backgrounds: backgrounds.logic },
    guards: {
      final: ({ event }) => event.type === 'input.message' && event.final,
      hasTextInput: () => textInput !== undefined,
    },
  }).createMachine({
    id: `mode:${name}`,
    context: { pendingText: [] },
    invoke: actions.map((entry) => ({
      id: `action:${entry.llm_label}`,
      systemId: modeMemberId(name, `action:${entry.llm_label}`),
      src: 'action' as const,
      input: { entry, deps: actionDeps, ...(deps.track ? { track: deps.track } : {}) },
    })),
    initial: 'standby',
    states: {
      standby: {
        on: {
          'mode.run': 'running',
          // Context an action published while hooks run (a hook's spoken turn): the mode machine keeps it for when the mode is active.
          'context.update': { actions: sendParent(({ event }) => event) },
          'mode.text': {
            guard: 'hasTextInput',
            actions: assign({ pendingText: ({ context, event }) => [...context.pendingText, event.text].slice(-PENDING_TEXT) }),
          },
        },
      },
      running: {
        tags: ['running'],
        // Typed text that waited is delivered once the inputs are up (raised events run after the children start).
        entry: [({ self }) => startRun(m, self), raise({ type: 'mode.flushText' })],
        invoke: [
          ...inputInvocations(m),
          ...backgrounds.invoke,
          { id: 'model', src: 'owner', input: ({ self }: { self: AnyActorRef }) => endOfRun(m, self) },
          ...mcpInvocations(m),
          { id: 'loop', src: 'loop', input: ({ self }: { self: AnyActorRef }) => loopInput(m, self) },
        ],
        on: {
          'mode.standby': 'standby',
          'input.message': [
            { guard: 'final', actions: sendTo('loop', ({ event }) => ({ type: 'loop.wake', text: event.type === 'input.message' ? event.text : undefined })) },
            {
              actions: sendTo('loop', ({ event }) =>
                event.type === 'input.message' ? { type: 'loop.partial', id: event.id, text: event.text } : { type: 'none' },
              ),
            },
          ],
          'context.update': { actions: sendParent(({ event }) => event) },
          'mode.text': { guard: 'hasTextInput', actions: sendTo(textInput ?? 'none', ({ event }) => ({ type: 'input.text', text: event.text })) },
          'mode.flushText': {
            actions: enqueueActions(({ context, enqueue }) => {
              if (!textInput) return;
              for (const text of context.pendingText) enqueue.sendTo(textInput, { type: 'input.text', text });
              enqueue.assign({ pendingText: [] });
            }),
          },
        },
      },
    },
  });
}

/**
 * Offers a tick's finals to the mode machine (`modes`) and waits for its answer (`keywords.answered`
 * with the same id): true when a keyword rule fired or the mode is no longer the running one. A mode
 * machine that is gone (the agent stops) answers true: the tick ends without the model.
 */
function offerKeywords(at: HasSystem, mode: string, id: string, text: string): Promise<boolean> {
  const modes = at.system.get('modes') as AnyActorRef | undefined;
  if (!modes) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const answered = modes.on('keywords.answered', (e: { id: string; switched: boolean }) => {
      if (e.id !== id) return;
      ended.unsubscribe();
      answered.unsubscribe();
      resolve(e.switched);
    });
    const ended = modes.subscribe({ complete: () => resolve(true), error: () => resolve(true) });
    modes.send({ type: 'input.text', text, mode, id });
  });
}

/** Extra lines of the system message: the known places and the safety notice, when there are any. */
function promptContext(...parts: Array<string | undefined>): string | undefined {
  const lines = parts.filter((p): p is string => Boolean(p?.trim()));
  return lines.length ? lines.join('\n\n') : undefined;
}

function stopLlm(llm: LlmPlugin | undefined, report: (source: string, message: string) => void): void {
  try {
    llm?.stop?.();
  } catch (err) {
    report('model', `stopping the model: ${describeError(err)}`);
  }
}
