// The agent, the one root actor: it owns the mode machine (modes own inputs, streams, loop, actions, tool servers, hooks), the simulators and shutdown.
import {
  assign,
  createActor,
  fromCallback,
  fromPromise,
  sendTo,
  setup,
  type Actor,
  type AnyActorLogic,
  type AnyActorRef,
  type InspectionEvent,
  type Observer,
} from 'xstate';
import type { Logger } from 'pino';
import type { CloudClient } from '../../src/cloud/client.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import type { AgentControl, MediaPreview, SimulatorHandle } from '../../src/cortex/contracts.js';
import { AgentBus } from '../../src/cortex/events.js';
import type { MediaTap } from '../../src/cortex/input.js';
import { LATEST_SCAN_KEY, LatestScan, scanPreview } from '../../src/lidar/view.js';
import { BrowserAudioHub } from '../../src/cortex/browser-audio.js';
import { PositionBoard } from '../../src/cortex/positions.js';
import { BodyBoard } from '../../src/cortex/bodies.js';
import type { McpOptions } from '../../src/cortex/mcp.js';
import { makeToolsForMode } from '../../src/cortex/tools.js';
import type { Plugins } from '../../src/cortex/plugins.js';
import { describeError } from '../../src/errors.js';
import { log } from '../../src/log.js';
import { fileModeMemory, modeMemoryPath, type ModeMemoryStore } from '../../src/modes/memory.js';
import { stateDir as defaultStateDir } from '../../src/paths.js';
import { createInteractionLog, type InteractionLog } from '../actions/interactions.js';
import { openRecall, type OpenRecall } from './recall.js';
import { followModes, type ModeView } from './mode-events.js';
import { fleetLogic, type FleetHost } from '../fleet/fleet.js';
import { inputIds, inputLogic } from '../inputs/input-actor.js';
import type { TickReport } from '../cortex/loop.js';
import { createModeLogic, modeActions, modeParts, type ModeActorDeps, type ModeParts } from '../modes/mode.js';
import { restoreInput } from '../modes/context.js';
import { createModeMachine, type ModeOutput } from '../modes/machine.js';
import { realClock, type Clock } from '../modes/types.js';
import { governorLogic, type SafetyStatus } from '../safety/governor.js';
import { GOVERNOR_NOT_RUNNING, GovernorView, initialStatus } from '../safety/status.js';
import { motionLabels, safetyNoticeOf, safetySetup, type SafetySetup } from '../safety/wiring.js';

export interface AgentOptions {
  loaded: LoadedConfig;
  /** The robot's bodies, shared by the agents of one process (a reload keeps the pose); default: the agent's own. */
  bodies?: BodyBoard;
  /** The concrete plugins of this configuration: `await resolvePlugins(builtinPlugins, loaded.config)` (actors/plugin-registry.ts). */
  plugins: Plugins;
  /** The hosted or embedded service; without it model calls fail (tests of hooks and modes). */
  cloud?: CloudClient;
  bus?: AgentBus;
  logger?: Logger;
  /** One clock for the whole tree: mode timers, hook timeouts, loops (a SimulatedClock in tests). */
  clock?: Clock;
  /** Console connector output; default: nothing (the bus carries every action). */
  write?: (line: string) => void;
  stateDir?: string;
  /** Mode memory; default the file under the state directory when the config enables it. */
  memory?: ModeMemoryStore | false;
  hooksDir?: string;
  /** Budget of on_exit + on_shutdown hooks at stop (default 10 s), then of closing everything (default 5 s). */
  shutdownBudgetMs?: number;
  closeBudgetMs?: number;
  maxToolRounds?: number;
  mcp?: McpOptions;
  /** XState inspection (the `--inspect` inspector): sees the whole tree. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  onTick?: (mode: string, report: TickReport) => void;
  /** Directory of the e-stop socket (default: runtimeDir() of src/paths.ts); false: no socket. */
  runtimeDir?: string | false;
  /** The fleet channel's link to `cortexd run` (reload); the channel runs when the configuration has `fleet` settings. */
  fleet?: FleetHost;
  /** A recording or live view (`--record`, `--foxglove`): inputs give it the frames they send and the audio they hear. */
  media?: MediaTap;
  /**
   * The agent is a child of another root (`cortexd run`'s process root, actors/process/process.ts): the handle
   * creates no actor; the host spawns `logic` (id and system id `agent`) and the handle binds itself
   * to that child when it starts. `start()` is then the host's business; `inspect` and `clock` are the host's.
   */
  hosted?: boolean;
}

/** How the agent ended: code 0 after a normal stop, 1 when the start-up failed (reason says why). */
export interface AgentOutcome {
  code: number;
  reason: string | null;
  mode: string;
}

type RootEvent = { type: 'agent.stop'; reason: string };

/** Longest a simulator waits for the first tick before it starts anyway (start-up hooks that take long). */
const SIMULATOR_START_WAIT_MS = 3000;

/** Promises of asynchronous cleanups started by actors that stopped (a connector closing, a server shutting down). */
class Cleanups {
  private readonly pending = new Set<Promise<unknown>>();
  track = (p: Promise<unknown>): void => {
    const settled = p.catch(() => undefined).finally(() => this.pending.delete(settled));
    this.pending.add(settled);
  };
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.pending]);
  }
}

/**
 * A running agent: the root actor `agent` and its tree. `start()` runs on_startup hooks and enters the
 * first mode; `stop(reason)` runs on_exit and on_shutdown hooks within `shutdownBudgetMs`, then waits
 * at most `closeBudgetMs` for what the stopped actors were closing; `done` resolves when it is over.
 */
export class Agent implements AgentControl {
  readonly bus: AgentBus;
  readonly configName: string;
  readonly config: LoadedConfig['config'];
  readonly done: Promise<AgentOutcome>;
  /** The agent's root machine: started by this handle, or spawned by the host when `hosted`. */
  readonly logic: AnyActorLogic;
  /** How it ended, set before `done` resolves and before a host hears that its child is done. */
  outcome: AgentOutcome | undefined;
  /** WebSim's microphone and speech (src/cortex/browser-audio.ts): one link for the whole run, across modes. */
  readonly browserAudio = new BrowserAudioHub();
  /** The robot's newest GPS position, shared by this agent's GPS inputs and remember_location. */
  private readonly positions = new PositionBoard();
  private actor: AnyActorRef | undefined;
  private resolveDone: (outcome: AgentOutcome) => void = () => {};
  private readonly logger: Logger;
  private readonly cleanups = new Cleanups();
  private readonly inputIdsOf = new Map<string, string[]>();
  /** The logic every mode runs its inputs with: the plugins they made, found by actor (the media preview). */
  private readonly inputs = inputLogic();
  private modeOutput: ModeOutput | null = null;
  private interactionLog: InteractionLog | undefined;
  /** The knowledge base and memory, when the configuration has either (closed with everything else at stop). */
  private readonly recall: OpenRecall | undefined;
  /** The mode the machine starts in: the restored one, else the default. */
  private readonly initialMode: string;
  /** The mode machine's mode and whether it runs, as it announces them (bound with the root actor). */
  private modes: ModeView | undefined;
  /** The governor's status as it changes, and its releases (bound with the root actor). */
  private governorView: GovernorView | undefined;
  /** The root was started (by `start`, or by the host of a hosted agent). */
  private started = false;
  /** Why a stop was asked; undefined while none was. */
  private stopAsked: string | undefined;
  private readonly safety: SafetySetup;
  /** The robot's things in this process (bodies, the lidar's newest scan). */
  private readonly bodies: BodyBoard;
  /** Settles at the end of the first tick: simulators do their start-up work after it (see simulatorLogics). */
  private readonly firstTick: Promise<void>;
  private tickedFirst: () => void = () => {};

  constructor(private readonly options: AgentOptions) {
    const { loaded } = options;
    this.firstTick = new Promise<void>((resolve) => (this.tickedFirst = resolve));
    this.bus = options.bus ?? new AgentBus();
    this.config = loaded.config;
    this.configName = loaded.configName;
    this.logger = options.logger ?? log();
    const clock = options.clock ?? realClock;
    const stateDir = options.stateDir ?? defaultStateDir();
    const store =
      options.memory === false || !loaded.config.mode_memory_enabled
        ? undefined
        : (options.memory ?? fileModeMemory(modeMemoryPath(loaded.configName, stateDir), (m) => this.logger.warn(m)));
    for (const [name, mode] of Object.entries(loaded.config.modes)) this.inputIdsOf.set(name, inputIds(mode.agent_inputs.map((i) => i.type)));
    this.bodies = options.bodies ?? new BodyBoard();
    this.safety = safetySetup({
      board: this.bodies,
      config: loaded.config,
      configName: loaded.configName,
      bus: this.bus,
      logger: this.logger,
      now: () => clock.now(),
      stateDir,
      ...(options.runtimeDir !== undefined ? { runtimeDir: options.runtimeDir } : {}),
      ...(options.media ? { media: options.media } : {}),
    });
    this.recall = openRecall({ loaded, stateDir, logger: this.logger, now: () => clock.now() }, this.bus);
    const modeInput = restoreInput(loaded.config, store);
    this.initialMode = modeInput.initialMode && Object.hasOwn(loaded.config.modes, modeInput.initialMode) ? modeInput.initialMode : loaded.config.default_mode;
    this.logic = buildRootMachine({
      modeMachine: this.modeMachineOf(clock, stateDir, store),
      modeInput,
      shutdownBudgetMs: options.shutdownBudgetMs ?? 10_000,
      closeBudgetMs: options.closeBudgetMs ?? 5_000,
      simulators: this.simulatorLogics(),
      safety: { logic: governorLogic(), input: this.safety.input },
      fleet: this.fleetChildren(stateDir),
      closeAll: () => this.closeAll(),
      drain: () => this.cleanups.settled(),
      onModesDone: (out) => (this.modeOutput = out),
      onStart: (self) => this.bind(self),
    });
    this.done = new Promise<AgentOutcome>((resolve) => (this.resolveDone = resolve));
    if (!options.hosted) {
      const actor = createActor(this.logic, { clock, systemId: 'agent', ...(options.inspect ? { inspect: options.inspect } : {}) }) as Actor<AnyActorLogic>;
      this.attach(actor);
    }
  }

  /** The mode machine of the configuration, whose modes run with this agent's services (ModeActorDeps). */
  private modeMachineOf(clock: Clock, stateDir: string, store: ModeMemoryStore | undefined) {
    const { loaded, plugins } = this.options;
    const labelsOf = new Map(Object.entries(loaded.config.modes).map(([name, mode]) => [name, motionLabels(mode, plugins)]));
    const modeDeps: ModeActorDeps = {
      ...(this.recall ? { recall: this.recall.recall } : {}),
      inputs: this.inputs,
      loaded,
      plugins,
      bus: this.bus,
      logger: this.logger,
      clock,
      ...(this.options.cloud ? { cloud: this.options.cloud } : {}),
      stateDir,
      write: this.options.write ?? (() => {}),
      toolsForMode: makeToolsForMode(plugins.descriptors.actions),
      onTick: (mode, report) => this.onTick(mode, report),
      maxToolRounds: this.options.maxToolRounds ?? 3,
      interactions: () => (this.interactionLog ??= createInteractionLog(stateDir, this.configName, { logger: this.logger })),
      track: this.cleanups.track,
      ...(this.options.mcp ? { mcp: this.options.mcp } : {}),
      ...(this.options.media ? { media: this.options.media } : {}),
      browserAudio: this.browserAudio,
      positions: this.positions,
      bodies: this.bodies,
      safetyNotice: (mode) => safetyNoticeOf(this.safetyStatus(), this.safety.policy, mode, labelsOf.get(mode) ?? []),
    };
    return createModeMachine(loaded.config, {
      clock,
      logger: this.logger,
      configName: loaded.configName,
      memory: store ?? false,
      ...(this.options.hooksDir ? { hooksDir: this.options.hooksDir } : {}),
      speak: (text, signal, mode) => this.actionOf(mode, 'speak').run(text, signal),
      dispatchAction: (label, value, signal, mode) => this.actionOf(mode, label).run(value, signal),
      modeLogic: (name) => createModeLogic(name, modeDeps),
    });
  }

  /** The fleet channel: the child `fleet` of the root, in `up` beside the simulators, when the configuration has one. */
  private fleetChildren(stateDir: string) {
    const { loaded } = this.options;
    if (!loaded.fleet) return [];
    const logic = fleetLogic({
      settings: loaded.fleet,
      bus: this.bus,
      control: this,
      logger: this.logger,
      stateDir,
      ...(loaded.sha256 ? { configSha256: loaded.sha256 } : {}),
      ...(this.options.fleet ? { host: this.options.fleet } : {}),
      stopReason: () => this.stopAsked ?? 'stopped',
      track: this.cleanups.track,
    });
    return [{ id: 'fleet', logic }];
  }

  /** Closes what the agent's actors left open: their pending stops, the e-stop store, the interaction log, then recall. */
  private async closeAll(): Promise<void> {
    await this.cleanups.settled();
    await this.safety.store.flush();
    // Interactions of the last ticks reach the disk before the process ends (appends never throw).
    await this.interactionLog?.flush();
    // The conversation in progress is summarised (briefly), then the knowledge and memory files close.
    await this.recall?.close();
  }

  /** Follows the root actor: the mode machine's events (the context values reach the governor from the machine itself) and the end. */
  private attach(actor: AnyActorRef): void {
    this.actor = actor;
    this.modes = followModes(this.ref('modes')!, this.bus, this.initialMode);
    this.governorView = new GovernorView(this.ref('safety')!, initialStatus(this.safety.input.latch));
    const finish = (outcome: AgentOutcome) => {
      this.governorView?.close();
      this.outcome = outcome;
      this.resolveDone(outcome);
    };
    actor.subscribe({
      complete: () => {
        const out = this.modeOutput;
        const failed = out !== null && !out.ok;
        const code = failed ? 1 : 0;
        this.bus.emit({ type: 'agent.stopped', at: Date.now(), code });
        finish({ code, reason: out?.reason ?? null, mode: out?.mode ?? this.currentMode() });
      },
      error: (err) => finish({ code: 1, reason: describeError(err), mode: this.currentMode() }),
    });
  }

  /** A hosted agent's actor, given by its host as it spawns it (before it starts). */
  hostedBy(actor: AnyActorRef): void {
    this.bind(actor);
  }

  /** The root's first action: a hosted agent binds to the child its host spawned (a standalone one is bound already). */
  private bind(self: AnyActorRef): void {
    if (this.actor) return;
    this.bus.emit({ type: 'agent.started', at: Date.now(), config: this.configName, mode: this.currentMode() });
    this.started = true;
    this.attach(self);
  }

  /** Starts the tree: simulators, on_startup hooks, then the first mode. A hosted agent is started by its host. */
  start(): void {
    if (this.options.hosted || !this.actor) throw new Error('a hosted agent is started by its host');
    this.bus.emit({ type: 'agent.started', at: Date.now(), config: this.configName, mode: this.currentMode() });
    this.started = true;
    (this.actor as Actor<AnyActorLogic>).start();
  }

  /** Asks for a graceful stop; `done` resolves when it is over. Repeated calls are ignored. */
  stop(reason: string): void {
    // Before start the stop waits in the root's mailbox, as XState keeps events sent to an actor not started yet.
    if (this.stopAsked !== undefined || this.outcome) return;
    this.stopAsked = reason;
    this.bus.emit({ type: 'agent.stopping', at: Date.now(), reason });
    this.actor?.send({ type: 'agent.stop', reason });
  }

  /** The mode as the mode machine last announced it (`mode.changed`); the one it starts in before. */
  currentMode(): string {
    return this.modes?.mode ?? this.initialMode;
  }

  /** True when the current mode runs (its on_entry hooks are done, its inputs and loop are up). */
  get ready(): boolean {
    return !this.outcome && (this.modes?.running ?? false);
  }

  /** The root actor (for inspection and tests that walk the tree). */
  get root(): AnyActorRef {
    if (!this.actor) throw new Error('the hosted agent has not started');
    return this.actor;
  }

  switchMode(mode: string, reason: string): Promise<{ ok: boolean; reason?: string }> {
    const ref = this.ref('modes');
    if (!ref || this.outcome || !this.started) return Promise.resolve({ ok: false, reason: 'the agent is not running' });
    return new Promise((resolve) => {
      const subs = [
        ref.on('mode.changed', (e: { to: string }) => e.to === mode && finish({ ok: true })),
        ref.on('mode.refused', (e: { requested: string; reason: string }) => e.requested === mode && finish({ ok: false, reason: e.reason })),
      ];
      function finish(r: { ok: boolean; reason?: string }) {
        for (const s of subs) s.unsubscribe();
        resolve(r);
      }
      ref.send({ type: 'mode.switch', mode, reason });
    });
  }

  /**
   * Feeds typed text to the current mode's input that accepts typed text; false when the mode has
   * none. Text typed while the mode is entering waits and is delivered when its inputs start.
   */
  pushText(text: string): boolean {
    const mode = this.currentMode();
    const modeConfig = this.config.modes[mode];
    if (!modeConfig?.agent_inputs.some((i) => this.options.plugins.descriptors.inputs.get(i.type)?.typedText === true)) return false;
    const ref = this.ref(`mode:${mode}`);
    if (!ref) return false;
    ref.send({ type: 'mode.text', text });
    return true;
  }

  /**
   * WebSim's camera and microphone panels: the preview of the current mode's listening inputs, asked
   * on request (media never goes on the bus). The first input that has a frame (a level) answers.
   */
  readonly media: MediaPreview = {
    frame: async () => {
      for (const slot of this.partsOf(this.currentMode())?.inputs() ?? []) {
        const frame = await slot.plugin.preview?.frame?.();
        if (frame) return { input: slot.type, ...frame };
      }
      return undefined;
    },
    level: () => {
      for (const slot of this.partsOf(this.currentMode())?.inputs() ?? []) {
        const level = slot.plugin.preview?.level?.();
        if (level) return { input: slot.type, ...level };
      }
      return undefined;
    },
    scan: () => {
      const lidar = this.config.lidar;
      const latest = lidar ? this.bodies.of(LATEST_SCAN_KEY, () => new LatestScan()) : undefined;
      if (!lidar || !latest?.scan) return undefined;
      const guard = this.safety.policy.obstacle;
      return scanPreview(latest.scan, latest.source, lidar, guard ? { stopM: guard.stopM, slowM: guard.slowM } : undefined);
    },
  };

  /** Sets context values for `context_aware` rules (WebSim, the fleet channel); inputs publish theirs themselves. */
  setContext(values: Record<string, unknown>, source = 'control'): void {
    this.bus.emit({ type: 'context', at: Date.now(), source, values });
    this.ref('modes')?.send({ type: 'context.update', values });
  }

  // ---- Motion safety: the governor `safety` is a child of the root, see actors/safety/. ----

  /** Latches the emergency stop: running motion is interrupted, the stop command sent, later motion refused until `release`. */
  estop(reason: string, source: string): void {
    const governor = this.governor();
    if (!governor) {
      this.logger.error(`emergency stop from ${source} while the safety governor is not running: ${reason}`);
      return;
    }
    governor.send({ type: 'safety.estop', reason: reason.slice(0, 200) || 'emergency stop', source });
  }

  /** Releases a latched emergency stop, as the governor decides; motion does not resume by itself (the next motion command starts it). */
  async release(source: string): Promise<{ ok: boolean; reason?: string }> {
    if (!this.governorView || this.outcome) return { ok: false, reason: 'the safety governor is not running' };
    return this.governorView.release(source);
  }

  /** The governor's status as it last changed (GOVERNOR_NOT_RUNNING once it stopped). */
  safetyStatus(): SafetyStatus {
    if (this.outcome) return GOVERNOR_NOT_RUNNING;
    return this.governorView?.status ?? GOVERNOR_NOT_RUNNING;
  }

  private governor(): AnyActorRef | undefined {
    return this.ref('safety');
  }

  // ---- end of motion safety ----

  /** An actor of the tree by its system id (`modes`, `safety`, `mode:<name>`, `mode:<name>/action:<label>`); none when it is not running. */
  private ref(systemId: string): AnyActorRef | undefined {
    return this.actor?.system.get(systemId) as AnyActorRef | undefined;
  }

  /** The running parts of `mode` (its actions and inputs, by system id), or none when the mode actor is not running. */
  private partsOf(mode: string): ModeParts | undefined {
    const config = this.config.modes[mode];
    return this.actor && this.ref(`mode:${mode}`) && config
      ? modeParts(this.actor, mode, modeActions(config), this.inputIdsOf.get(mode) ?? [], this.inputs, { bus: this.bus, logger: this.logger })
      : undefined;
  }

  /** The action `label` (llm_label, else name) of `mode`, for hooks; throws a clear error when it is absent. */
  private actionOf(mode: string, label: string) {
    const handle = this.partsOf(mode)?.handle(label);
    if (!handle) throw new Error(`mode ${mode} has no ${label === 'speak' ? 'speak action' : `action "${label}"`} running`);
    return handle;
  }

  private onTick(mode: string, report: TickReport): void {
    this.tickedFirst();
    this.bus.emit({
      type: 'tick',
      at: report.startedAt,
      mode,
      n: report.seq,
      late_skipped: report.skipped,
      lateness_ms: Math.round(report.latenessMs * 1000) / 1000,
      called_model: report.calledModel,
    });
    if (report.error !== undefined && !(report.error instanceof Error && report.error.name === 'AbortError')) {
      this.bus.emit({ type: 'error', at: report.endedAt, source: 'tick', message: describeError(report.error) });
    }
    this.options.onTick?.(mode, report);
  }

  /** One `sim:<type>` actor per simulator type listed by any mode; each is one instance for the whole agent. */
  private simulatorLogics(): Array<{ id: string; logic: AnyActorLogic }> {
    const seen = new Map<string, unknown>();
    for (const mode of Object.values(this.config.modes)) for (const sim of mode.simulators) if (!seen.has(sim.type)) seen.set(sim.type, sim.config);
    return [...seen].map(([type, config]) => ({
      id: `sim:${type}`,
      logic: fromCallback(() => {
        const report = (message: string) => this.bus.emit({ type: 'error', at: Date.now(), source: `simulator.${type}`, message });
        // The simulator listens to the bus from now on and does its start-up work (WebSim: graph, server,
        // listen) after the first tick, so the first tick does not wait for it; a start-up whose
        // hooks take longer than SIMULATOR_START_WAIT_MS gets its simulators then. This actor owns the wait.
        let go: () => void = () => {};
        const startAfter = new Promise<void>((resolve) => (go = resolve));
        const wait = setTimeout(go, SIMULATOR_START_WAIT_MS);
        void this.firstTick.then(go);
        let handle: SimulatorHandle | undefined;
        try {
          handle = this.options.plugins.simulator(type).create(config ?? {}, {
            agent: this,
            logger: this.logger.child({ simulator: type }),
            stateDir: this.options.stateDir ?? defaultStateDir(),
            startAfter,
          });
          handle.start().catch((err) => report(describeError(err)));
        } catch (err) {
          report(`simulator ${type} not started: ${describeError(err)}`);
        }
        return () => {
          clearTimeout(wait);
          go();
          if (handle) this.cleanups.track(handle.stop());
        };
      }),
    }));
  }
}

interface RootParts {
  modeMachine: ReturnType<typeof createModeMachine>;
  modeInput: ReturnType<typeof restoreInput>;
  shutdownBudgetMs: number;
  closeBudgetMs: number;
  simulators: Array<{ id: string; logic: AnyActorLogic }>;
  /** The safety governor: invoked for the root's whole life (systemId `safety`), told first when the agent stops. */
  safety: { logic: ReturnType<typeof governorLogic>; input: import('../safety/governor.js').GovernorInput };
  /** The fleet channel (none, or one actor `fleet`); like simulators it lives through `up`, so it reports the shutdown hooks. */
  fleet: Array<{ id: string; logic: AnyActorLogic }>;
  /** Waits for the cleanups of the stopped modes and flushes the interaction log. */
  closeAll: () => Promise<unknown>;
  /** Waits for the cleanups of the simulators. */
  drain: () => Promise<unknown>;
  onModesDone: (out: ModeOutput) => void;
  /** The root's first action, before any child starts (the handle binds to the actor that runs it). */
  onStart: (self: AnyActorRef) => void;
}

/**
 * up { live (the mode machine runs) -> closing (what the stopped modes close) } -> draining (what
 * the simulators close) -> stopped. `agent.stop` sends `agent.shutdown` to the mode machine; its
 * hooks get `shutdownBudgetMs`, after which the mode machine is stopped (stopping every actor of
 * every mode, which aborts hooks, model calls and commands); closing gets `closeBudgetMs`, and so
 * does draining. Simulators live through `up`, so they show the shutdown hooks.
 */
function buildRootMachine(p: RootParts) {
  const upChildren = [...p.simulators, ...p.fleet];
  const sims = Object.fromEntries(upChildren.map((s) => [s.id, s.logic]));
  return setup({
    types: { context: {} as { reason: string | null }, events: {} as RootEvent },
    actors: { modes: p.modeMachine, safety: p.safety.logic, closeAll: fromPromise(() => p.closeAll()), drain: fromPromise(() => p.drain()), ...sims },
    delays: { shutdownBudget: p.shutdownBudgetMs, closeBudget: p.closeBudgetMs },
    actions: {
      keepOutput: (_, out: ModeOutput) => p.onModesDone(out),
      bind: ({ self }) => p.onStart(self),
    },
  }).createMachine({
    id: 'agent',
    context: { reason: null },
    entry: 'bind',
    // Lives as long as the root, through shutdown, so it can stop motion when the agent stops (and after).
    invoke: { id: 'safety', systemId: 'safety', src: 'safety', input: p.safety.input },
    initial: 'up',
    states: {
      up: {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        invoke: upChildren.map((s) => ({ id: s.id, src: s.id as any })),
        initial: 'live',
        states: {
          live: {
            tags: ['live'],
            invoke: {
              id: 'modes',
              systemId: 'modes',
              src: 'modes',
              input: p.modeInput,
              onDone: { target: 'closing', actions: { type: 'keepOutput', params: ({ event }) => event.output as ModeOutput } },
              onError: {
                target: 'closing',
                actions: { type: 'keepOutput', params: ({ event }) => ({ ok: false, reason: describeError(event.error), mode: '' }) },
              },
            },
            initial: 'running',
            states: {
              running: {
                // The governor sends the stop command before any shutdown hook runs.
                on: {
                  'agent.stop': {
                    target: 'shuttingDown',
                    actions: [
                      sendTo('safety', ({ event }) => ({ type: 'safety.stopping', reason: event.reason })),
                      assign({ reason: ({ event }) => event.reason }),
                      sendTo('modes', { type: 'agent.shutdown' }),
                    ],
                  },
                },
              },
              shuttingDown: { tags: ['stopping'], after: { shutdownBudget: '#agent.up.closing' } },
            },
          },
          closing: {
            tags: ['stopping'],
            invoke: { src: 'closeAll', onDone: '#agent.draining', onError: '#agent.draining' },
            after: { closeBudget: '#agent.draining' },
          },
        },
      },
      draining: {
        tags: ['stopping'],
        invoke: { src: 'drain', onDone: 'stopped', onError: 'stopped' },
        after: { closeBudget: 'stopped' },
      },
      stopped: { type: 'final' },
    },
  });
}
