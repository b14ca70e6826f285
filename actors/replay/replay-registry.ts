// The plugins of a replay: inputs feed their recorded messages, connectors only report, and `--model recorded` serves the recorded answers.
import { Observable, type Subscriber } from 'rxjs';
import type { ActionConnector } from '../../src/cortex/action.js';
import type { InputMessage } from '../../src/cortex/input.js';
import type { LlmAnswer, LlmPlugin } from '../../src/cortex/llm.js';
import { pluginRegistry } from '../../src/cortex/plugins-resolve.js';
import type { PluginLoaders, PluginRegistry } from '../../src/cortex/plugins.js';
import { batteryChanged, gpsChanged, visionChanged, type VisionFact } from '../../src/cortex/wake.js';
import { type BufferPolicy, BufferedInput } from '../inputs/buffered-input.js';
import type { Clock } from '../modes/types.js';

/** Delivers recorded messages to the replay inputs of a type that are listening now (the current mode's). */
export class ReplayFeeds {
  private readonly listeners = new Map<string, Map<Subscriber<InputMessage>, string | undefined>>();

  /**
   * Hands `message` to the listening inputs of `type`: those labelled `descriptor` when the recording
   * named it and one listens under it (two ROS 2 topic inputs of a mode), else every one of the type;
   * false when none listens (the replay's mode has no such input).
   */
  push(type: string, message: InputMessage, descriptor?: string): boolean {
    const subs = this.listeners.get(type);
    if (!subs?.size) return false;
    // A copy: an input that starts while this message is handled (a keyword switched the mode) must not get it too.
    const all = [...subs];
    const named = descriptor === undefined ? [] : all.filter(([, d]) => d === descriptor);
    for (const [s] of named.length ? named : all) s.next(message);
    return true;
  }

  listen(type: string, descriptor?: string): Observable<InputMessage> {
    return new Observable<InputMessage>((sub) => {
      const subs = this.listeners.get(type) ?? new Map<Subscriber<InputMessage>, string | undefined>();
      this.listeners.set(type, subs);
      subs.set(sub, descriptor);
      return () => subs.delete(sub);
    });
  }
}

/**
 * How an input buffers and wakes the model, as its plugin does (actors/inputs/*): what decides when
 * the replay calls the model. A type not listed buffers everything and wakes on any new text.
 */
interface InputBehaviour {
  policy: BufferPolicy;
  /** Voice inputs keep finals only: partial transcripts never enter the prompt. */
  finalsOnly?: boolean;
  changed?: (config: Record<string, unknown>) => (previous: string, next: string) => boolean;
}

const num = (v: unknown, d: number) => (typeof v === 'number' ? v : d);
const vision: InputBehaviour = {
  policy: 'latest',
  changed: (c) => (a, b) => visionChanged(a, b, Array.isArray(c.wake_on) ? (c.wake_on as VisionFact[]) : undefined),
};
const INPUT_BEHAVIOURS: Record<string, InputBehaviour> = {
  SpeechlabASRInput: { policy: 'all', finalsOnly: true },
  SpeechbASRInput: { policy: 'all', finalsOnly: true },
  VLMInput: vision,
  LocalVLMInput: vision,
  BatteryInput: { policy: 'latest', changed: (c) => (a, b) => batteryChanged(a, b, num(c.wake_percent_step, 10)) },
  GpsInput: { policy: 'latest', changed: (c) => (a, b) => gpsChanged(a, b, num(c.wake_distance_m, 25)) },
  // A ROS 2 topic: the newest message; only a different text is news.
  Ros2TopicInput: { policy: 'latest', changed: () => (a, b) => a !== b },
};

class ReplayInput extends BufferedInput<InputMessage> {
  private readonly isChanged: ((previous: string, next: string) => boolean) | undefined;
  constructor(
    type: string,
    config: Record<string, unknown>,
    descriptor: string,
    private readonly feeds: ReplayFeeds,
  ) {
    const behaviour = INPUT_BEHAVIOURS[type];
    const wake = config.wake;
    super({
      type,
      descriptor,
      bufferSize: num(config.buffer_size, 50),
      policy: behaviour?.policy ?? 'all',
      ...(behaviour?.finalsOnly ? { keep: (m: InputMessage) => m.final === true } : {}),
      ...(wake === 'change' || wake === 'always' || wake === 'never' ? { wake } : {}),
    });
    this.isChanged = behaviour?.changed?.(config);
  }
  protected source(): Observable<InputMessage> {
    return this.feeds.listen(this.type, this.descriptor);
  }
  protected toMessage(raw: InputMessage): InputMessage | undefined {
    return raw;
  }
  protected override changed(previous: string, next: string): boolean {
    return this.isChanged ? this.isChanged(previous, next) : true;
  }
}

/**
 * What the model answered, in order, per mode: an answer (`streamed` when the run spoke it as it
 * arrived) or an error, and how long it took, so the replay's ticks see the answer when the run did.
 */
export type RecordedOutcome = ({ answer: Pick<LlmAnswer, 'text' | 'toolCalls' | 'model'>; streamed: boolean } | { error: string }) & {
  latencyMs: number;
  /** When the run asked, ms after the run's start. */
  askedAtMs: number;
  /** The final inputs the asking tick took (`TickFinals`): '' for a tick no typed line or transcript woke. */
  finals?: string;
};

/**
 * Serves the recorded outcomes of each mode to the replay's calls. A call may take an outcome asked
 * within `toleranceMs(mode)` of it, and takes, of those no call took yet:
 * - the first whose tick took the same final inputs as the call's tick (`finals`), so a typed line's
 *   answer reaches the tick that answers that line even when the replay's ticks fall differently
 *   (a run's first tick that saw devices come up, a tick a loaded run woke late);
 * - else the first in order.
 *
 * It answers after the recorded latency on the replay's clock. Outcomes the window passed untaken are
 * counted (`missed`); a call with no outcome in its window gets an empty answer at once (`extra`).
 * A streamed answer goes through the observer as a stream does (so speech is cut into the same sentences).
 */
export class RecordedModel {
  private readonly next = new Map<string, number>();
  private readonly taken = new Set<RecordedOutcome>();
  /** Calls that had no recorded outcome near them. */
  extra = 0;
  /** Recorded outcomes no replayed call asked for. */
  missed = 0;
  constructor(
    private readonly outcomes: Map<string, RecordedOutcome[]>,
    private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout' | 'now'>,
    private readonly toleranceMs: (mode: string) => number,
  ) {}

  /** The outcome for a call in `mode` now whose tick took `finals` (unknown: undefined), or undefined. */
  private take(mode: string, finals: string | undefined): RecordedOutcome | undefined {
    const list = this.outcomes.get(mode) ?? [];
    const now = this.clock.now();
    const tolerance = this.toleranceMs(mode);
    let k = this.next.get(mode) ?? 0;
    for (; k < list.length; k++) {
      const o = list[k]!;
      if (this.taken.has(o)) continue;
      if (o.askedAtMs >= now - tolerance) break;
      this.taken.add(o);
      this.missed++;
    }
    this.next.set(mode, k);
    const window: RecordedOutcome[] = [];
    for (let i = k; i < list.length && list[i]!.askedAtMs <= now + tolerance; i++) if (!this.taken.has(list[i]!)) window.push(list[i]!);
    const outcome = (finals !== undefined ? window.find((o) => o.finals === finals) : undefined) ?? window[0];
    if (outcome) this.taken.add(outcome);
    return outcome;
  }

  private wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const id = this.clock.setTimeout(() => resolve(), ms);
      signal.addEventListener('abort', () => (this.clock.clearTimeout(id), reject(signal.reason ?? new Error('aborted'))), { once: true });
    });
  }

  /** The model plugin: `mode` is the mode running now, `finals(mode)` what its latest prompt took (`TickFinals`). */
  plugin(mode: () => string, finals: (mode: string) => string | undefined = () => undefined): LlmPlugin {
    return {
      type: 'RecordedModel',
      ask: async (_request, signal, observer) => {
        const current = mode();
        const outcome = this.take(current, finals(current));
        if (!outcome) {
          this.extra++;
          return { toolCalls: [], model: 'recorded', latencyMs: 0 };
        }
        await this.wait(outcome.latencyMs, signal);
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

/** The descriptors the plugins use when the config names none (the prompt's line prefix, for `--model live`). */
const descriptorDefaults: Record<string, string> = {
  TextInput: 'Voice (typed)',
  SpeechlabASRInput: 'Voice',
  SpeechbASRInput: 'Voice',
  VLMInput: 'Vision',
  LocalVLMInput: 'Vision',
  BatteryInput: 'Battery',
  GpsInput: 'GPS',
  SerialReader: 'Serial',
  MqttInput: 'MQTT',
};

/** Connectors that carry out nothing: the action actor, its queue, its events and the safety governor's gate all run as recorded. */
const sinkConnector = (name: string): ActionConnector => ({
  name,
  run: async () => undefined,
  stop: async () => undefined,
  halt: async () => undefined,
});

/**
 * The calls a live model (`--model live`) has in flight. They take real time (an HTTP round trip at
 * least) while the replay's clock is simulated: the replay does not move its clock on while one is
 * out, as the recorded run's clock did not move faster than its model answered.
 */
export class LiveModelCalls {
  private pending = 0;
  private readonly waiting = new Set<() => void>();

  get inFlight(): number {
    return this.pending;
  }

  /** Resolves when no call is out, or after `maxMs` of real time. */
  idle(maxMs: number): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => (clearTimeout(timer), this.waiting.delete(done), resolve());
      const timer = setTimeout(done, maxMs);
      this.waiting.add(done);
    });
  }

  /** The model plugin with each `ask` counted while it is out; its other members are the plugin's own. */
  track(plugin: LlmPlugin): LlmPlugin {
    const ask: LlmPlugin['ask'] = async (...args) => {
      this.pending++;
      try {
        return await plugin.ask(...args);
      } finally {
        this.pending--;
        if (this.pending === 0) for (const done of [...this.waiting]) done();
      }
    };
    return new Proxy(plugin, {
      get(target, prop) {
        if (prop === 'ask') return ask;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}

export interface ReplayRegistryOptions {
  feeds: ReplayFeeds;
  /** Serves recorded answers instead of the configured model (`--model recorded`). */
  model?: RecordedModel;
  /** Counts the configured model's calls in flight (`--model live`). */
  live?: LiveModelCalls;
  /** The mode running now (the recorded model answers per mode). */
  currentMode: () => string;
  /** The final inputs the mode's latest prompt took (`TickFinals`), which pair a call with its recorded answer. */
  tickFinals?: (mode: string) => string | undefined;
}

/** `base` with every input, connector and (optionally) model replaced; descriptors (args, motion flags, typed text) are kept. */
export function replayRegistry(base: PluginRegistry, options: ReplayRegistryOptions): PluginRegistry {
  const inputs: PluginLoaders['inputs'] = {};
  for (const d of base.descriptors.inputs.all())
    inputs[d.type] = async () => (raw) => {
      const config = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
      // A ROS 2 topic input is labelled with its topic unless it names a descriptor.
      const named =
        typeof config.descriptor === 'string' ? config.descriptor : d.type === 'Ros2TopicInput' && typeof config.topic === 'string' ? config.topic : undefined;
      const descriptor = named ?? descriptorDefaults[d.type] ?? d.type;
      return new ReplayInput(d.type, config, descriptor, options.feeds);
    };
  const connectors: PluginLoaders['connectors'] = {};
  for (const [action, byName] of Object.entries(base.loaders.connectors)) {
    connectors[action] = {};
    for (const name of Object.keys(byName)) connectors[action]![name] = async () => () => sinkConnector(name);
  }
  const llms: PluginLoaders['llms'] = {};
  for (const [type, loader] of Object.entries(base.loaders.llms)) {
    const { model, live } = options;
    if (model) llms[type] = async () => () => model.plugin(options.currentMode, options.tickFinals);
    else if (live)
      llms[type] = async () => {
        const factory = await loader();
        return (config, ctx) => live.track(factory(config, ctx));
      };
    else llms[type] = loader;
  }
  const simulators: PluginLoaders['simulators'] = {};
  for (const type of Object.keys(base.loaders.simulators)) simulators[type] = async () => () => ({ start: async () => undefined, stop: async () => undefined });
  return pluginRegistry(base.descriptors, { inputs, llms, connectors, simulators });
}
