// The root agent machine: owns the mode machine, starts and stops each mode's runtime, simulators, and a bounded shutdown.
import { assign, createActor, fromPromise, sendTo, setup, type Actor, type AnyActorRef, type InspectionEvent, type Observer } from 'xstate';
import type { Logger } from 'pino';
import type { CloudClient } from '../src/cloud/client.js';
import type { LoadedConfig } from '../src/config/schema.js';
import type { AgentControl, McpHub, SimulatorHandle } from '../src/cortex/contracts.js';
import { AgentBus } from '../src/cortex/events.js';
import { describeError } from '../src/errors.js';
import { log } from '../src/log.js';
import { fileModeMemory, modeMemoryPath, type ModeMemoryStore } from '../src/modes/memory.js';
import { stateDir as defaultStateDir } from '../src/paths.js';
import type { Plugins } from '../src/plugins/index.js';
import { makeToolsForMode } from '../src/cortex/tools.js';
import { createMcpHub } from '../src/cortex/mcp.js';
import { createActionHandle } from './actions/handle.js';
import { createInteractionLog, type InteractionLog } from './actions/interactions.js';
import { ModeRuntime, type ModeRuntimeDeps } from './agent/mode-runtime.js';
import { wireModeEvents, type ModeSnapshot } from './agent/mode-events.js';
import { createModeMachine, type ModeOutput } from './modes/machine.js';
import { restoreInput } from './modes/context.js';
import { AsyncHooks } from './modes/hooks.js';
import { realClock, type Clock } from './modes/types.js';
import type { TickReport } from './cortex.js';

export interface AgentOptions {
  loaded: LoadedConfig;
  /** The plugins `loaded` uses, already loaded: `await resolvePlugins(builtinPlugins, loaded.config)` (actors/plugins.ts). */
  plugins: Plugins;
  /** The hosted or embedded service; without it model calls fail (tests of hooks and modes). */
  cloud?: CloudClient;
  bus?: AgentBus;
  logger?: Logger;
  /** One clock for the mode machine, hook timeouts and the loops (a SimulatedClock in tests). */
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
  createMcpHub?: ModeRuntimeDeps['createMcpHub'];
  maxToolRounds?: number;
  /** XState inspection (the `--inspect` inspector). */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  onTick?: (mode: string, report: TickReport) => void;
}

/** How the agent ended: code 0 after a normal stop, 1 when the start-up failed (reason says why). */
export interface AgentOutcome {
  code: number;
  reason: string | null;
  mode: string;
}

type RootEvent = { type: 'agent.stop'; reason: string };

/**
 * A running agent. `start()` runs on_startup hooks and enters the first mode; `stop(reason)` runs
 * on_exit and on_shutdown hooks within `shutdownBudgetMs`, then stops every mode runtime and
 * simulator within `closeBudgetMs`; `done` resolves when all of it is over.
 */
export class Agent implements AgentControl {
  readonly bus: AgentBus;
  readonly configName: string;
  readonly config: LoadedConfig['config'];
  readonly done: Promise<AgentOutcome>;
  private readonly actor: Actor<ReturnType<typeof buildRootMachine>>;
  private readonly runtimes = new Map<string, ModeRuntime>();
  private readonly pending = new Set<Promise<void>>();
  private readonly sims: SimulatorHandle[] = [];
  private readonly logger: Logger;
  private modeOutput: ModeOutput | null = null;
  private interactionLog: InteractionLog | undefined;
  private lastMode: string;
  private closed = false;

  constructor(private readonly options: AgentOptions) {
    const { loaded } = options;
    this.bus = options.bus ?? new AgentBus();
    this.config = loaded.config;
    this.configName = loaded.configName;
    this.logger = options.logger ?? log();
    this.lastMode = loaded.config.default_mode;
    const clock = options.clock ?? realClock;
    const store =
      options.memory === false || !loaded.config.mode_memory_enabled
        ? undefined
        : (options.memory ?? fileModeMemory(modeMemoryPath(loaded.configName, options.stateDir ?? defaultStateDir()), (m) => this.logger.warn(m)));
    const asyncHooks = new AsyncHooks();
    const modeMachine = createModeMachine(
      loaded.config,
      {
        clock,
        logger: this.logger,
        configName: loaded.configName,
        memory: store ?? false,
        ...(options.hooksDir ? { hooksDir: options.hooksDir } : {}),
        speak: (text, signal, mode) => this.runtime(mode).then((rt) => speakThrough(rt, text, signal)),
        dispatchAction: (label, value, signal, mode) => this.runtime(mode).then((rt) => runAction(rt, label, value, signal)),
      },
      asyncHooks,
    );
    const root = buildRootMachine({
      modeMachine,
      modeInput: restoreInput(loaded.config, store),
      shutdownBudgetMs: options.shutdownBudgetMs ?? 10_000,
      closeBudgetMs: options.closeBudgetMs ?? 5_000,
      close: () => this.closeAll(),
      onLeaveModes: () => asyncHooks.abortAll(),
      onModesDone: (out) => (this.modeOutput = out),
    });
    this.actor = createActor(root, { clock, ...(options.inspect ? { inspect: options.inspect } : {}) });
    const modes = this.modesRef();
    wireModeEvents(modes, this.bus, { onSnapshot: (s) => this.reconcile(s) });
    this.done = new Promise<AgentOutcome>((resolve) => {
      this.actor.subscribe({
        complete: () => {
          const out = this.modeOutput;
          const failed = out !== null && !out.ok;
          const code = failed ? 1 : 0;
          this.bus.emit({ type: 'agent.stopped', at: Date.now(), code });
          resolve({ code, reason: out?.reason ?? null, mode: out?.mode ?? this.lastMode });
        },
        error: (err) => resolve({ code: 1, reason: describeError(err), mode: this.lastMode }),
      });
    });
  }

  /** Starts the mode machine (on_startup hooks, then the first mode) and the simulators. */
  start(): void {
    this.bus.emit({ type: 'agent.started', at: Date.now(), config: this.configName, mode: this.currentMode() });
    this.actor.start();
    this.startSimulators();
  }

  /** Asks for a graceful stop; `done` resolves when it is over. Repeated calls are ignored. */
  stop(reason: string): void {
    if (this.actor.getSnapshot().status !== 'active') return;
    this.bus.emit({ type: 'agent.stopping', at: Date.now(), reason });
    this.actor.send({ type: 'agent.stop', reason });
  }

  currentMode(): string {
    const ref = this.modesRef();
    return (ref?.getSnapshot() as ModeSnapshot | undefined)?.context.mode ?? this.lastMode;
  }

  /** True when the current mode's loop runs (its on_entry hooks are done). */
  get ready(): boolean {
    return this.runtimes.get(this.currentMode())?.isRunning ?? false;
  }

  switchMode(mode: string, reason: string): Promise<{ ok: boolean; reason?: string }> {
    const ref = this.modesRef();
    if (!ref || this.actor.getSnapshot().status !== 'active') return Promise.resolve({ ok: false, reason: 'the agent is not running' });
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

  pushText(text: string): boolean {
    return this.runtimes.get(this.currentMode())?.pushText(text) ?? false;
  }

  private modesRef(): AnyActorRef {
    return this.actor.getSnapshot().children.modes as AnyActorRef;
  }

  private deps(): ModeRuntimeDeps {
    const o = this.options;
    return {
      loaded: o.loaded,
      bus: this.bus,
      logger: this.logger,
      clock: o.clock ?? realClock,
      ...(o.cloud ? { cloud: o.cloud } : {}),
      stateDir: o.stateDir ?? defaultStateDir(),
      write: o.write ?? (() => {}),
      createActionHandle,
      toolsForMode: makeToolsForMode(o.plugins.descriptors.actions),
      plugins: o.plugins,
      createMcpHub: o.createMcpHub ?? ((d) => createMcpHub({ logger: d.logger, bus: d.bus })),
      keywords: (mode, text) => this.offerKeywords(mode, text),
      onTick: (mode, report) => {
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
        o.onTick?.(mode, report);
      },
      maxToolRounds: o.maxToolRounds ?? 3,
      interactions: () =>
        (this.interactionLog ??= createInteractionLog(o.stateDir ?? defaultStateDir(), this.configName, { logger: this.logger })),
    };
  }

  /** The runtime of `mode` (created when first needed), for hooks that speak or run actions. */
  private runtime(mode: string): Promise<ModeRuntime> {
    return Promise.resolve(this.runtimeOf(mode));
  }

  private runtimeOf(mode: string): ModeRuntime {
    let rt = this.runtimes.get(mode);
    if (!rt || this.closed) {
      rt = new ModeRuntime(mode, this.deps());
      if (!this.closed) this.runtimes.set(mode, rt);
    }
    return rt;
  }

  /** Sends the tick's final texts to the mode machine; true when a keyword transition fired. */
  private offerKeywords(mode: string, text: string): boolean {
    const ref = this.modesRef();
    const before = ref.getSnapshot() as ModeSnapshot;
    if (!isActive(before, mode)) return true;
    ref.send({ type: 'input.text', text });
    return !isActive(ref.getSnapshot() as ModeSnapshot, mode);
  }

  /**
   * Follows the mode machine: action handles live while their mode is current (hooks of entry, exit
   * and shutdown use them); inputs, model, tool servers and loop run while the mode is active or
   * running its on_timeout hooks, and stop as soon as it starts exiting.
   */
  private reconcile(s: ModeSnapshot): void {
    if (this.closed) return;
    const mode = s.context.mode;
    this.lastMode = mode;
    for (const [name, rt] of this.runtimes) {
      if (name !== mode) {
        this.runtimes.delete(name);
        this.track(rt.stop());
      }
    }
    const rt = this.runtimeOf(mode);
    rt.actions();
    const sub = typeof s.value === 'object' ? (s.value as Record<string, string>)[mode] : undefined;
    if (s.status === 'active' && (sub === 'active' || sub === 'timingOut')) rt.start();
    else this.track(rt.stopRunning());
  }

  private track(p: Promise<void>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private startSimulators(): void {
    const seen = new Map<string, unknown>();
    for (const mode of Object.values(this.config.modes)) for (const sim of mode.simulators) if (!seen.has(sim.type)) seen.set(sim.type, sim.config);
    for (const [type, config] of seen) {
      try {
        const spec = this.options.plugins.simulator(type);
        const handle = spec.create(config ?? {}, { agent: this, logger: this.logger.child({ simulator: type }) });
        this.sims.push(handle);
        handle.start().catch((err) => this.bus.emit({ type: 'error', at: Date.now(), source: `simulator.${type}`, message: describeError(err) }));
      } catch (err) {
        this.bus.emit({ type: 'error', at: Date.now(), source: `simulator.${type}`, message: `simulator ${type} not started: ${describeError(err)}` });
      }
    }
  }

  /** Stops every runtime and simulator; the root machine bounds how long this may take. */
  private async closeAll(): Promise<void> {
    this.closed = true;
    const stops = [...this.runtimes.values()].map((rt) => rt.stop());
    this.runtimes.clear();
    stops.push(...this.pending, ...this.sims.map((s) => s.stop()));
    // Interactions of the last ticks reach the disk before the process ends (appends never throw).
    if (this.interactionLog) stops.push(Promise.allSettled([...stops]).then(() => this.interactionLog!.flush()));
    const results = await Promise.allSettled(stops);
    for (const r of results) if (r.status === 'rejected') this.logger.warn(`while stopping: ${describeError(r.reason)}`);
  }
}

function isActive(s: ModeSnapshot, mode: string): boolean {
  return s.status === 'active' && typeof s.value === 'object' && (s.value as Record<string, string>)[mode] === 'active';
}

async function speakThrough(rt: ModeRuntime, text: string, signal: AbortSignal): Promise<void> {
  const handles = rt.actions();
  const speak = handles.find((h) => h.entry.llm_label === 'speak') ?? handles.find((h) => h.entry.name === 'speak');
  if (!speak) throw new Error(`mode ${rt.name} has no speak action`);
  await speak.run(text, signal);
}

async function runAction(rt: ModeRuntime, label: string, value: unknown, signal: AbortSignal): Promise<void> {
  const handles = rt.actions();
  const handle = handles.find((h) => h.entry.llm_label === label) ?? handles.find((h) => h.entry.name === label);
  if (!handle) throw new Error(`mode ${rt.name} has no action "${label}"`);
  await handle.run(value, signal);
}

interface RootParts {
  modeMachine: ReturnType<typeof createModeMachine>;
  modeInput: ReturnType<typeof restoreInput>;
  shutdownBudgetMs: number;
  closeBudgetMs: number;
  close: () => Promise<void>;
  onLeaveModes: () => void;
  onModesDone: (out: ModeOutput) => void;
}

/**
 * live (the mode machine runs) -> closing (runtimes and simulators stop) -> stopped. `agent.stop`
 * sends `agent.shutdown` to the mode machine; its hooks get `shutdownBudgetMs`, after which the
 * mode machine is stopped (aborting the hooks still running); closing gets `closeBudgetMs`.
 */
function buildRootMachine(p: RootParts) {
  return setup({
    types: { context: {} as { reason: string | null }, events: {} as RootEvent },
    actors: { modes: p.modeMachine, closeAll: fromPromise(() => p.close()) },
    delays: { shutdownBudget: p.shutdownBudgetMs, closeBudget: p.closeBudgetMs },
    actions: {
      leaveModes: () => p.onLeaveModes(),
      keepOutput: (_, out: ModeOutput) => p.onModesDone(out),
    },
  }).createMachine({
    id: 'agent',
    context: { reason: null },
    initial: 'live',
    states: {
      live: {
        exit: 'leaveModes',
        invoke: {
          id: 'modes',
          systemId: 'modes',
          src: 'modes',
          input: p.modeInput,
          onDone: { target: 'closing', actions: { type: 'keepOutput', params: ({ event }) => event.output as ModeOutput } },
          onError: { target: 'closing', actions: { type: 'keepOutput', params: ({ event }) => ({ ok: false, reason: describeError(event.error), mode: '' }) } },
        },
        initial: 'running',
        states: {
          running: {
            on: { 'agent.stop': { target: 'shuttingDown', actions: [assign({ reason: ({ event }) => event.reason }), sendTo('modes', { type: 'agent.shutdown' })] } },
          },
          shuttingDown: { after: { shutdownBudget: '#agent.closing' } },
        },
      },
      closing: {
        invoke: { src: 'closeAll', onDone: 'stopped', onError: 'stopped' },
        after: { closeBudget: 'stopped' },
      },
      stopped: { type: 'final' },
    },
  });
}

export type McpHubFactory = (deps: { logger: Logger; bus: AgentBus; mode: string }) => McpHub;
