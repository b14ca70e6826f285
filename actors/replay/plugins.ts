// The plugins of a replay: each input becomes a feed of its recorded messages, each connector a sink that only reports, and (with --model recorded) the model serves the recorded answers.
import { Observable, type Subscriber } from 'rxjs';
import type { ActionConnector } from '../../src/cortex/action.js';
import type { InputMessage } from '../../src/cortex/input.js';
import type { LlmAnswer, LlmPlugin } from '../../src/cortex/llm.js';
import { pluginRegistry } from '../../src/plugins/resolve.js';
import type { PluginLoaders, PluginRegistry } from '../../src/plugins/types.js';
import { BufferedInput } from '../inputs/buffered-input.js';
import type { Clock } from '../modes/types.js';

/** Delivers recorded messages to the replay inputs of a type that are listening now (the current mode's). */
export class ReplayFeeds {
  private readonly listeners = new Map<string, Set<Subscriber<InputMessage>>>();

  /** Hands `message` to every listening input of `type`; false when none listens (the replay's mode has no such input). */
  push(type: string, message: InputMessage): boolean {
    const subs = this.listeners.get(type);
    if (!subs?.size) return false;
    // A copy: an input that starts while this message is handled (a keyword switched the mode) must not get it too.
    for (const s of [...subs]) s.next(message);
    return true;
  }

  listen(type: string): Observable<InputMessage> {
    return new Observable<InputMessage>((sub) => {
      const set = this.listeners.get(type) ?? new Set();
      this.listeners.set(type, set);
      set.add(sub);
      return () => set.delete(sub);
    });
  }
}

class ReplayInput extends BufferedInput<InputMessage> {
  constructor(
    type: string,
    descriptor: string,
    private readonly feeds: ReplayFeeds,
  ) {
    super({ type, descriptor, bufferSize: 50, policy: 'all' });
  }
  protected source(): Observable<InputMessage> {
    return this.feeds.listen(this.type);
  }
  protected toMessage(raw: InputMessage): InputMessage | undefined {
    return raw;
  }
}

/**
 * What the model answered, in order, per mode: an answer (`streamed` when the run spoke it as it
 * arrived) or an error, and how long it took, so the replay's ticks see the answer when the run did.
 */
export type RecordedOutcome = ({ answer: Pick<LlmAnswer, 'text' | 'toolCalls' | 'model'>; streamed: boolean } | { error: string }) & {
  latencyMs: number;
  /** When the run had it, ms after the run's start: the replay serves it then (or at once when it is late). */
  atMs: number;
};

/**
 * Serves the recorded outcomes of each mode in their order, after their recorded latency on the
 * replay's clock; a streamed answer goes through the observer as a stream does (so speech is cut into
 * the same sentences). Past the last outcome, an empty answer (the replay asked more than the run did).
 */
export class RecordedModel {
  private readonly next = new Map<string, number>();
  /** Calls that had no recorded outcome left. */
  extra = 0;
  constructor(
    private readonly outcomes: Map<string, RecordedOutcome[]>,
    private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout' | 'now'>,
  ) {}

  private wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const id = this.clock.setTimeout(() => resolve(), ms);
      signal.addEventListener('abort', () => (this.clock.clearTimeout(id), reject(signal.reason ?? new Error('aborted'))), { once: true });
    });
  }

  plugin(mode: () => string): LlmPlugin {
    return {
      type: 'RecordedModel',
      ask: async (_request, signal, observer) => {
        const m = mode();
        const k = this.next.get(m) ?? 0;
        this.next.set(m, k + 1);
        const outcome = this.outcomes.get(m)?.[k];
        if (!outcome) {
          this.extra++;
          return { toolCalls: [], model: 'recorded', latencyMs: 0 };
        }
        await this.wait(Math.max(0, outcome.atMs - this.clock.now()), signal);
        if ('error' in outcome) throw new Error(outcome.error);
        const { answer } = outcome;
        if (outcome.streamed && observer) {
          observer.firstToken?.(Date.now());
          if (answer.text) observer.text?.(answer.text);
          answer.toolCalls.forEach((call, i) => {
            observer.toolCallStarted?.(i, call.name, call.id);
            observer.toolCallProgress?.(i, call.arguments);
            observer.toolCallDone?.(i, call);
          });
        }
        return { ...answer, latencyMs: outcome.latencyMs, streamed: outcome.streamed && observer !== undefined };
      },
    };
  }
}

const descriptorDefaults: Record<string, string> = { TextInput: 'Voice (typed)' };

/** Connectors that carry out nothing: the action actor, its queue, its events and the safety governor's gate all run as recorded. */
const sinkConnector = (name: string): ActionConnector => ({
  name,
  run: async () => undefined,
  stop: async () => undefined,
  halt: async () => undefined,
});

export interface ReplayRegistryOptions {
  feeds: ReplayFeeds;
  /** Serves recorded answers instead of the configured model (`--model recorded`). */
  model?: RecordedModel;
  /** The mode running now (the recorded model answers per mode). */
  currentMode: () => string;
}

/** `base` with every input, connector and (optionally) model replaced; descriptors (args, motion flags, typed text) are kept. */
export function replayRegistry(base: PluginRegistry, options: ReplayRegistryOptions): PluginRegistry {
  const inputs: PluginLoaders['inputs'] = {};
  for (const d of base.descriptors.inputs.all())
    inputs[d.type] = async () => (raw) => {
      const descriptor = (raw as { descriptor?: unknown } | undefined)?.descriptor;
      return new ReplayInput(d.type, typeof descriptor === 'string' ? descriptor : (descriptorDefaults[d.type] ?? d.type), options.feeds);
    };
  const connectors: PluginLoaders['connectors'] = {};
  for (const [action, byName] of Object.entries(base.loaders.connectors)) {
    connectors[action] = {};
    for (const name of Object.keys(byName)) connectors[action]![name] = async () => () => sinkConnector(name);
  }
  const llms: PluginLoaders['llms'] = {};
  for (const [type, loader] of Object.entries(base.loaders.llms)) {
    const model = options.model;
    llms[type] = model ? async () => () => model.plugin(options.currentMode) : loader;
  }
  const simulators: PluginLoaders['simulators'] = {};
  for (const type of Object.keys(base.loaders.simulators)) simulators[type] = async () => () => ({ start: async () => undefined, stop: async () => undefined });
  return pluginRegistry(base.descriptors, { inputs, llms, connectors, simulators });
}
