// What one mode runs while it is current: its action handles, inputs, model, tool servers and cortex loop, and how they stop.
import { of, type Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { CloudClient } from '../../src/cloud/client.js';
import type { ActionConfig, LoadedConfig, ModeConfig } from '../../src/config/schema.js';
import type { ActionHandle, ActionHandleDeps, McpHub, ToolsForMode } from '../../src/cortex/contracts.js';
import type { AgentBus } from '../../src/cortex/events.js';
import type { LlmPlugin } from '../../src/cortex/llm.js';
import { describeError } from '../../src/errors.js';
import type { Plugins } from '../../src/plugins/index.js';
import { startCortexLoop, type CortexLoopActor, type TickReport } from '../cortex.js';
import { runTick, speakHandle, type TickInput } from '../cortex/tick.js';
import type { Clock } from '../modes/types.js';
import { implicitActions, LocationStore } from '../actions/locations.js';
import type { InteractionLog } from '../actions/interactions.js';

/** Everything a mode runtime needs from the agent; the factories are the plugin contracts. */
export interface ModeRuntimeDeps {
  loaded: LoadedConfig;
  /** The loaded plugins of the configuration (inputs, model, actions and connectors). */
  plugins: Plugins;
  bus: AgentBus;
  logger: Logger;
  clock: Clock;
  cloud?: CloudClient;
  stateDir: string;
  write: (line: string) => void;
  createActionHandle: (entry: ModeConfig['agent_actions'][number], deps: ActionHandleDeps) => ActionHandle;
  toolsForMode: ToolsForMode;
  /** Builds the tool-server hub of a mode that lists `mcp_servers`; without it such servers are reported and skipped. */
  createMcpHub?: (deps: { logger: Logger; bus: AgentBus; mode: string }) => McpHub;
  /** Offers final texts to the mode machine's keyword rules; true when a transition fired. */
  keywords: (mode: string, text: string) => boolean;
  /** After every tick (events, metrics, watchdog). */
  onTick: (mode: string, report: TickReport) => void;
  /** Most model rounds per tick when MCP results are fed back. */
  maxToolRounds: number;
  /** The agent's interaction log (one per agent, shared by its modes); used by modes with `save_interactions`. */
  interactions?: () => InteractionLog;
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

interface Running {
  inputs: TickInput[];
  subs: Subscription[];
  loop: CortexLoopActor;
  hub?: McpHub;
  llm: LlmPlugin;
  abort: AbortController;
}

/** Most typed lines kept while a mode's inputs are not started yet. */
const PENDING_TEXT = 20;

export class ModeRuntime {
  private handles: ActionHandle[] | undefined;
  private readonly pendingText: string[] = [];
  private running: Running | undefined;
  private stopped = false;
  private readonly logger: Logger;
  private readonly mode: ModeConfig;

  constructor(
    readonly name: string,
    private readonly deps: ModeRuntimeDeps,
  ) {
    this.mode = deps.loaded.config.modes[name]!;
    this.logger = deps.logger.child({ mode: name });
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /** The mode's action handles, created on first use (hooks of the mode need them before its loop starts). */
  actions(): readonly ActionHandle[] {
    if (this.stopped) return [];
    if (!this.handles) {
      this.handles = [];
      for (const entry of modeActions(this.mode)) {
        try {
          this.handles.push(
            this.deps.createActionHandle(entry, {
              logger: this.logger,
              bus: this.deps.bus,
              mode: this.name,
              stateDir: this.deps.stateDir,
              write: this.deps.write,
              ...(this.deps.cloud ? { cloud: this.deps.cloud } : {}),
              plugins: this.deps.plugins,
            }),
          );
        } catch (err) {
          this.report('action', `action ${entry.llm_label} not started: ${describeError(err)}`);
        }
      }
    }
    return this.handles;
  }

  /** Starts inputs, the model, the tool servers and the loop; does nothing when they run already. */
  start(): void {
    if (this.running || this.stopped) return;
    const abort = new AbortController();
    const handles = this.actions();
    const speak = speakHandle(handles);
    const inputs: TickInput[] = [];
    const subs: Subscription[] = [];
    for (const entry of this.mode.agent_inputs) {
      try {
        const spec = this.deps.plugins.input(entry.type);
        const plugin = spec.create(entry.config ?? {}, {
          logger: this.logger.child({ input: entry.type }),
          stateDir: this.deps.stateDir,
          signal: abort.signal,
          ...(this.deps.cloud ? { cloud: this.deps.cloud } : {}),
          speakerBusy$: speak ? speak.busy$ : of(false),
          ...(speak ? { interruptSpeaker: () => speak.interrupt() } : {}),
        });
        const input: TickInput = { plugin, finals: [] };
        inputs.push(input);
        subs.push(
          plugin.listen().subscribe({
            next: (raw) => this.onRaw(input, raw),
            error: (err) => this.report(`input.${entry.type}`, `input ${entry.type} failed: ${describeError(err)}`),
          }),
        );
      } catch (err) {
        this.report(`input.${entry.type}`, `input ${entry.type} not started: ${describeError(err)}`);
      }
    }
    let llm: LlmPlugin;
    try {
      // The loader copies the global model into modes without one; a config built in code may not have.
      const llmEntry = this.llmEntry();
      if (!llmEntry) throw new Error('no cortex_llm in the mode or the configuration');
      const spec = this.deps.plugins.llm(llmEntry.type);
      llm = spec.create(llmOptions(llmEntry), { logger: this.logger, cloud: this.deps.cloud! });
    } catch (err) {
      const message = `model ${this.llmEntry()?.type ?? '(none)'} not started: ${describeError(err)}`;
      this.report('model', message);
      llm = { type: 'unavailable', ask: async () => Promise.reject(new Error(message)) };
    }
    let hub: McpHub | undefined;
    if (this.mode.mcp_servers.length) {
      if (this.deps.createMcpHub) {
        hub = this.deps.createMcpHub({ logger: this.logger, bus: this.deps.bus, mode: this.name });
        void hub.start(this.mode.mcp_servers);
      } else this.report('mcp', 'tool servers are listed but no MCP hub is available: skipped');
    }
    const tickInputs = inputs;
    const actions = modeActions(this.mode);
    const locations = this.mode.remember_locations ? new LocationStore(this.deps.stateDir) : undefined;
    const interactions = this.mode.save_interactions ? this.deps.interactions?.() : undefined;
    const loop = startCortexLoop({
      hertz: this.mode.hertz,
      clock: this.deps.clock,
      onTick: (report) => this.deps.onTick(this.name, report),
      tick: (req, signal) =>
        runTick(
          {
            config: this.deps.loaded.config,
            modeName: this.name,
            mode: this.mode,
            inputs: tickInputs,
            handles: () => this.handles ?? [],
            llm,
            ...(hub ? { hub } : {}),
            toolsForMode: this.deps.toolsForMode,
            plugins: this.deps.plugins,
            bus: this.deps.bus,
            logger: this.logger,
            keywords: (text) => this.deps.keywords(this.name, text),
            skipIdle: skipIdleOf(this.mode, this.deps.loaded.config.cortex_llm),
            maxToolRounds: this.deps.maxToolRounds,
            actions,
            ...(locations ? { context: () => locations.describe() } : {}),
            ...(interactions ? { onInteraction: (record) => void interactions.append(record) } : {}),
          },
          req,
          signal,
        ),
    });
    this.running = { inputs, subs, loop, ...(hub ? { hub } : {}), llm, abort };
    for (const line of this.pendingText.splice(0)) this.pushText(line);
  }

  private llmEntry(): ModeConfig['cortex_llm'] {
    return this.mode.cortex_llm ?? this.deps.loaded.config.cortex_llm;
  }

  private onRaw(input: TickInput, raw: unknown): void {
    const msg = input.plugin.rawToText(raw);
    if (!msg) return;
    this.deps.bus.emit({ type: 'input', at: msg.timestamp, mode: this.name, input: input.plugin.type, text: msg.text, final: Boolean(msg.final) });
    if (msg.final) {
      input.finals.push(msg.text);
      if (input.finals.length > 100) input.finals.shift();
      this.running?.loop.send({ type: 'loop.wake' });
    }
  }

  /**
   * Feeds typed text to the mode's TextInput (the first input with a `push` method); false when the mode
   * has none. Text typed while the mode is entering (its on_entry hooks run before its inputs start)
   * waits, at most PENDING_TEXT lines, and is delivered when the inputs start.
   */
  pushText(text: string): boolean {
    const target = this.running?.inputs.find((i) => typeof (i.plugin as { push?: unknown }).push === 'function');
    if (!target) {
      if (this.stopped || !this.mode.agent_inputs.some((i) => i.type === 'TextInput')) return false;
      this.pendingText.push(text);
      if (this.pendingText.length > PENDING_TEXT) this.pendingText.shift();
      return true;
    }
    (target.plugin as unknown as { push(line: string): void }).push(text);
    return true;
  }

  /**
   * Stops inputs, tool servers and the loop (aborting a model call in flight). Everything synchronous
   * happens before the first await, so a new runtime of the same mode may start at once (a unix socket
   * path is released before this returns its promise).
   */
  stopRunning(): Promise<void> {
    const r = this.running;
    if (!r) return Promise.resolve();
    this.running = undefined;
    r.loop.stop();
    for (const s of r.subs) s.unsubscribe();
    r.abort.abort();
    try {
      r.llm.stop?.();
    } catch (err) {
      this.report('model', `stopping the model of ${this.name}: ${describeError(err)}`);
    }
    const stops = r.inputs.map((i) => i.plugin.stop());
    if (r.hub) stops.push(r.hub.stop());
    return settle(stops, (err) => this.report('stop', `stopping ${this.name}: ${describeError(err)}`));
  }

  /** Stops everything the mode holds, action handles included. Safe to call twice. */
  stop(): Promise<void> {
    const running = this.stopRunning();
    this.stopped = true;
    const handles = this.handles ?? [];
    this.handles = [];
    return settle([running, ...handles.map((h) => h.stop())], (err) => this.report('stop', `stopping ${this.name}: ${describeError(err)}`));
  }

  private report(source: string, message: string): void {
    this.logger.warn(message);
    this.deps.bus.emit({ type: 'error', at: Date.now(), source, message });
  }
}

async function settle(promises: Array<Promise<unknown>>, onError: (err: unknown) => void): Promise<void> {
  for (const r of await Promise.allSettled(promises)) if (r.status === 'rejected') onError(r.reason);
}
