// Replays a recording through an agent on a simulated clock (inputs, context values, manual switches at their times) and compares the decisions.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { CloudClient } from '../../src/cloud/client.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { type AgentEvent, AgentBus } from '../../src/cortex/events.js';
import { type Decision, type DecisionDiff, decisionsOf, diffDecisions } from '../../src/record/decisions.js';
import { EVENT_PREFIX } from '../../src/record/channels.js';
import type { Recording } from '../../src/record/reader.js';
import { resolvePlugins } from '../../src/cortex/plugins-resolve.js';
import type { PluginRegistry } from '../../src/cortex/plugins.js';
import { Agent } from '../agent/agent.js';
import { ReplayClock } from './replay-clock.js';
import { TickFinals } from './tick-finals.js';
import { LiveModelCalls, RecordedModel, type RecordedOutcome, ReplayFeeds, replayRegistry } from './replay-registry.js';

export interface ReplayOptions {
  recording: Recording;
  /** The configuration to replay against (the recorded one, or a changed copy). */
  loaded: LoadedConfig;
  registry: PluginRegistry;
  /** `recorded`: the recorded answers, no network; `live`: the configured model through `cloud`. */
  model: 'recorded' | 'live';
  cloud?: CloudClient;
  logger: Logger;
  /** Largest step of the simulated clock between two due timers, ms (default 100): the agent's I/O settles after each step. */
  stepMs?: number;
  /** Simulated time after the last recorded event when the recording has no stop (a killed run), ms (default 3000). */
  tailMs?: number;
}

export interface ReplayResult {
  recorded: Decision[];
  replayed: Decision[];
  diff: DecisionDiff;
  /** Simulated ms replayed and wall ms it took. */
  simulatedMs: number;
  wallMs: number;
  /** Recorded inputs that no input of the replay's mode took (the replay's mode differed). */
  undelivered: number;
  /** Model calls of the replay with no recorded answer near them, and recorded answers no call asked for (recorded model only). */
  extraModelCalls: number;
  missedModelCalls: number;
}

type Ev = Record<string, unknown> & { type: string; at: number };

/** Lets promise chains and I/O callbacks run between clock steps. */
/** How long (real time) one step of the clock waits at most for the live model's calls in flight. */
const LIVE_CALL_WAIT_MS = 15_000;

/** Lets the agent's I/O run after a step of the clock; with a live model, until its calls in flight are answered (bounded). */
function settlerFor(live: LiveModelCalls | undefined): () => Promise<void> {
  return async () => {
    for (let i = 0; i < 4; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    if (!live?.inFlight) return;
    await live.idle(LIVE_CALL_WAIT_MS);
    for (let i = 0; i < 4; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  };
}

function outcomesOf(events: Ev[], start: number): Map<string, RecordedOutcome[]> {
  const out = new Map<string, RecordedOutcome[]>();
  // A tick whose turn streamed (its turn event comes after its answer).
  const streamed = new Set(events.filter((e) => e.type === 'turn' && e.streamed === true).map((e) => `${String(e.mode)}#${String(e.tick)}`));
  const prompts = new Map(events.filter((e) => e.type === 'prompt').map((e) => [`${String(e.mode)}#${String(e.tick)}`, e.at]));
  const took = new TickFinals();
  const finals = new Map<string, string>();
  for (const e of events) {
    const key = took.see(e);
    if (key !== undefined) finals.set(`${String(e.mode)}#${String(e.tick)}`, key);
  }
  for (const e of events) {
    if (e.type !== 'model.answer' && e.type !== 'model.error') continue;
    const mode = String(e.mode);
    const key = `${mode}#${String(e.tick)}`;
    const list = out.get(mode) ?? [];
    const latencyMs = typeof e.latency_ms === 'number' ? e.latency_ms : Math.max(0, e.at - (prompts.get(key) ?? e.at));
    const askedAtMs = e.at - latencyMs - start;
    const heard = finals.get(key);
    const tookFinals = heard === undefined ? {} : { finals: heard };
    if (e.type === 'model.error') list.push({ error: String(e.error), latencyMs, askedAtMs, ...tookFinals });
    else {
      const calls = Array.isArray(e.tool_calls) ? (e.tool_calls as Array<{ name: string; arguments: unknown }>) : [];
      list.push({
        answer: {
          ...(typeof e.text === 'string' ? { text: e.text } : {}),
          toolCalls: calls.map((c) => ({ name: c.name, arguments: c.arguments })),
          model: String(e.model ?? 'recorded'),
        },
        streamed: streamed.has(key),
        latencyMs,
        askedAtMs,
        ...tookFinals,
      });
    }
    out.set(mode, list);
  }
  return out;
}

/** A configuration as replay runs it: no fleet channel, no MCP servers started, memory and the e-stop socket off. */
function replayConfig(loaded: LoadedConfig): LoadedConfig {
  const modes = Object.fromEntries(Object.entries(loaded.config.modes).map(([k, m]) => [k, { ...m, mcp_servers: [] }]));
  const { fleet: _fleet, ...rest } = loaded;
  return { ...rest, config: { ...loaded.config, modes, mode_memory_enabled: false } as LoadedConfig['config'] };
}

/** What replay gives the agent again: inputs, context values, and switches a person made. */
const isReplayedInput = (e: Ev): boolean => e.type === 'input' || e.type === 'context' || (e.type === 'mode.changed' && e.trigger === 'manual');

/** Gives one recorded input, context value or manual switch to the agent; false when an input found no listener. */
function deliver(e: Ev, agent: Agent, feeds: ReplayFeeds): boolean {
  if (e.type === 'input')
    return feeds.push(
      String(e.input),
      { timestamp: e.at / 1000, text: String(e.text), final: Boolean(e.final) },
      typeof e.descriptor === 'string' ? e.descriptor : undefined,
    );
  if (e.type === 'context') {
    if (e.values && typeof e.values === 'object') agent.setContext(e.values as Record<string, unknown>, String(e.source ?? 'replay'));
  } else void agent.switchMode(String(e.to), 'replayed manual switch');
  return true;
}

/** The recorded answers, each given to a call asked within 1.5 ticks and 250 ms of when the run asked it (the one that took the same finals first), after its recorded latency. */
function recordedModel(events: Ev[], start: number, clock: ReplayClock, loaded: LoadedConfig): RecordedModel {
  return new RecordedModel(outcomesOf(events, start), clock, (mode) => 1.5 * (1000 / (loaded.config.modes[mode]?.hertz ?? 1)) + 250);
}

/**
 * Watches the replay's bus: every event, stamped on the recording's time line, and the finals each of
 * its prompts took (`TickFinals`), seen as the recorded ones were on the run's bus.
 */
function watch(bus: AgentBus, clock: ReplayClock, start: number): { replayed: Ev[]; tickFinals: (mode: string) => string | undefined; stop: () => void } {
  const replayed: Ev[] = [];
  const took = new TickFinals();
  const lastFinals = new Map<string, string>();
  const sub = bus.events$.subscribe((e: AgentEvent) => {
    replayed.push({ ...(e as unknown as Ev), at: start + clock.now() });
    const key = took.see(e);
    if (key !== undefined && e.type === 'prompt') lastFinals.set(e.mode, key);
  });
  return { replayed, tickFinals: (mode) => lastFinals.get(mode), stop: () => sub.unsubscribe() };
}

/** Runs the agent again on the replay clock with the recording's inputs, context values and manual switches, and compares its decisions with the recorded ones. */
export async function replayRecording(options: ReplayOptions): Promise<ReplayResult> {
  const wallStart = performance.now();
  const events = options.recording.messages.filter((m) => m.topic.startsWith(EVENT_PREFIX)).map((m) => m.value as Ev);
  const start = events.find((e) => e.type === 'agent.started')?.at ?? events[0]?.at ?? 0;
  const end = events.at(-1)?.at ?? start;
  const feeds = new ReplayFeeds();
  const clock = new ReplayClock();
  const bus = new AgentBus();
  const loaded = replayConfig(options.loaded);
  let agent: Agent | undefined;
  const model = options.model === 'recorded' ? recordedModel(events, start, clock, loaded) : undefined;
  const live = model ? undefined : new LiveModelCalls();
  const settle = settlerFor(live);
  const currentMode = () => agent?.currentMode() ?? loaded.config.default_mode;
  const { replayed, tickFinals, stop: stopWatching } = watch(bus, clock, start);
  const registry = replayRegistry(options.registry, { feeds, ...(model ? { model } : {}), ...(live ? { live } : {}), currentMode, tickFinals });
  const plugins = await resolvePlugins(registry, loaded.config);
  const stateDir = await mkdtemp(join(tmpdir(), 'cortexd-replay-'));
  let undelivered = 0;
  try {
    agent = new Agent({
      loaded,
      plugins,
      bus,
      clock,
      logger: options.logger,
      memory: false,
      stateDir,
      runtimeDir: false,
      ...(options.cloud ? { cloud: options.cloud } : {}),
    });
    const running = agent;
    running.start();
    const stepMs = options.stepMs ?? 100;
    const advanceTo = (t: number) => clock.advanceTo(t, stepMs, settle);
    // A mode's inputs listen once its entry is done, which may wait on real work (hooks, the model's
    // client): the simulated clock does not move on while the agent is getting ready (bounded in real time).
    const whenReady = async () => {
      const deadline = performance.now() + 5000;
      while (!running.ready && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    };
    await settle();
    await whenReady();
    for (const e of events.filter(isReplayedInput)) {
      await advanceTo(e.at - start);
      await whenReady();
      if (!deliver(e, running, feeds)) undelivered++;
      await settle();
    }
    // The run's own stop, when it was recorded; else a tail in which what the last inputs started can finish.
    const stopping = events.find((e) => e.type === 'agent.stopping')?.at;
    await advanceTo(stopping !== undefined ? stopping - start : end - start + (options.tailMs ?? 3000));
    running.stop('replay finished');
    let finished = false;
    void running.done.then(() => (finished = true));
    for (let i = 0; i < 2000 && !finished; i++) {
      await clock.advanceTo(clock.now() + stepMs, stepMs, settle);
    }
  } finally {
    stopWatching();
    await rm(stateDir, { recursive: true, force: true });
  }
  const recordedDecisions = decisionsOf(events);
  const replayedDecisions = decisionsOf(replayed);
  return {
    recorded: recordedDecisions,
    replayed: replayedDecisions,
    diff: diffDecisions(recordedDecisions, replayedDecisions),
    simulatedMs: clock.now(),
    wallMs: performance.now() - wallStart,
    undelivered,
    extraModelCalls: model?.extra ?? 0,
    missedModelCalls: model?.missed ?? 0,
  };
}
