// The robot's fleet state (mode, health, battery, position, e-stop) as one reducer over bus events: nothing else feeds it.
import type { AgentEvent } from '../cortex/events.js';
import type { InboxStats } from './inbox.js';
import type { Health, RobotState } from './protocol.js';

/** What the channel knows of the agent before any event: its configuration and its mode now. */
export interface StateSeed {
  robot: string;
  config: string;
  configSha256?: string;
  version: string;
  mode: string;
  /** Input types and action labels of each mode (their health is tracked while the mode runs). */
  modes: Record<string, { inputs: string[]; actions: string[] }>;
  /** Whether the safety governor's e-stop is latched now (a latch survives restarts). */
  estopEngaged: boolean;
  now: number;
}

type Part = 'inputs' | 'actions' | 'streams' | 'tool_servers' | 'models';

/** The event types the state depends on; the others (ticks, prompts, answers...) are passed over unread. */
const FOLDED = new Set<string>(['mode.changed', 'input', 'error', 'action', 'stream', 'mcp', 'context', 'safety', 'model']);

/**
 * `apply(event)` folds one bus event into the state and says whether anything a reader would see
 * changed (so the retained message is published on change only). Health rules:
 * - inputs and actions of the current mode start `ok`; an input's `error` event makes it
 *   `restarting` (or `failed` when it stopped or never started), its next message makes it `ok`;
 *   an action's `failed` command makes it `failed` (with the error), a `done` one `ok` again;
 * - streams take their session state (`streaming` counts as healthy); tool servers `connected`/`failed`;
 * - the mode's model takes its `model` events: `failing` (unhealthy), `streaming_off` and `healthy` (ok);
 * - battery and position come from `context` events (`battery_percent`, `latitude`/`longitude`);
 * - the e-stop from the safety governor's `safety` events (`estop` latches, `release` clears), whoever pressed it.
 */
export class StateReducer {
  private state: RobotState;

  constructor(private readonly seed: StateSeed) {
    this.state = {
      robot: seed.robot,
      config: seed.config,
      ...(seed.configSha256 ? { config_sha256: seed.configSha256 } : {}),
      version: seed.version,
      mode: seed.mode,
      mode_since: seed.now,
      modes: Object.keys(seed.modes),
      health: { ok: true, inputs: {}, actions: {}, streams: {}, tool_servers: {}, models: {} },
      battery: null,
      position: null,
      estop: { available: true, engaged: seed.estopEngaged },
      updated_at: seed.now,
    };
    this.enterMode(seed.mode, seed.now);
  }

  /** The command inbox's counts (the channel's own, not from the bus); true when they changed. */
  setInbox(stats: InboxStats, now = Date.now()): boolean {
    const prev = this.state.commands;
    if (prev && prev.queued === stats.queued && prev.refused_full === stats.refused_full && prev.refused_too_large === stats.refused_too_large) return false;
    this.state.commands = { ...stats };
    this.state.updated_at = now;
    return true;
  }

  /** The state to publish (updated_at is the time of the last change). */
  get current(): RobotState {
    return this.state;
  }

  apply(e: AgentEvent): boolean {
    if (!FOLDED.has(e.type)) return false;
    const before = JSON.stringify({ ...this.state, updated_at: 0 });
    this.fold(e);
    const changed = JSON.stringify({ ...this.state, updated_at: 0 }) !== before;
    if (changed) this.state.updated_at = e.at;
    return changed;
  }

  private fold(e: AgentEvent): void {
    switch (e.type) {
      case 'safety':
        if (e.kind === 'estop' || e.kind === 'release') this.state.estop = { available: true, engaged: e.kind === 'estop' };
        break;
      case 'mode.changed':
        this.state.mode = e.to;
        this.state.mode_since = e.at;
        this.enterMode(e.to, e.at);
        return;
      case 'input':
        this.set('inputs', e.input, 'ok', e.at);
        return;
      case 'error': {
        const input = /^input\.(.+)$/.exec(e.source);
        if (input) {
          const state = / (stopped|not started|ended)[:\s]/.test(e.message) ? 'failed' : 'restarting';
          this.set('inputs', input[1]!, state, e.at, e.message);
        } else if (e.source === 'action') {
          const m = /^action (.+?) not started: /.exec(e.message);
          if (m) this.set('actions', m[1]!, 'failed', e.at, e.message);
        }
        return;
      }
      case 'action':
        if (e.state === 'failed') this.set('actions', e.label, 'failed', e.at, e.error);
        else if (e.state === 'done') this.set('actions', e.label, 'ok', e.at);
        return;
      case 'stream':
        this.set('streams', `${e.kind}/${e.input}`, e.state, e.at, e.reason ?? e.detail);
        return;
      case 'mcp':
        if (e.state === 'connected' || e.state === 'failed') this.set('tool_servers', e.server, e.state, e.at, e.state === 'failed' ? e.detail : undefined);
        return;
      case 'context':
        this.context(e.values);
        return;
      case 'model':
        this.set('models', e.model, e.state === 'healthy' ? 'ok' : e.state, e.at, e.reason);
        return;
      default:
        return;
    }
  }

  /** A new mode: its inputs and actions start ok; parts of the previous mode are forgotten. */
  private enterMode(mode: string, at: number): void {
    const parts = this.seed.modes[mode] ?? { inputs: [], actions: [] };
    const fresh = (names: string[]): Record<string, Health> => Object.fromEntries(names.map((n) => [n, { state: 'ok', since: at }]));
    this.state.health.inputs = fresh(parts.inputs);
    this.state.health.actions = fresh(parts.actions);
    this.state.health.streams = Object.fromEntries(
      Object.entries(this.state.health.streams).filter(([k]) => parts.inputs.includes(k.slice(k.indexOf('/') + 1))),
    );
    this.state.health.tool_servers = {};
    this.state.health.models = {};
    this.updateOk();
  }

  private set(part: Part, name: string, state: string, at: number, detail?: string): void {
    const record = (this.state.health[part] ??= {});
    const prev = record[name];
    if (prev && prev.state === state && prev.detail === detail) return;
    if (prev && prev.state === state && detail === undefined) return;
    record[name] = { state, ...(detail ? { detail: detail.slice(0, 500) } : {}), since: prev?.state === state ? prev.since : at };
    this.updateOk();
  }

  private updateOk(): void {
    const healthy = new Set(['ok', 'streaming', 'connecting', 'connected', 'streaming_off']);
    const h = this.state.health;
    h.ok = [h.inputs, h.actions, h.streams, h.tool_servers, h.models ?? {}].every((r) => Object.values(r).every((x) => healthy.has(x.state)));
  }

  private context(values: Record<string, unknown>): void {
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
    const percent = num(values.battery_percent);
    if (percent !== undefined) {
      this.state.battery = {
        percent,
        ...(typeof values.battery_status === 'string' ? { status: values.battery_status } : {}),
        ...(typeof values.battery_charging === 'boolean' ? { charging: values.battery_charging } : {}),
        ...(typeof values.battery_low === 'boolean' ? { low: values.battery_low } : {}),
      };
    }
    const lat = num(values.latitude);
    const lon = num(values.longitude);
    if (lat !== undefined && lon !== undefined) {
      const alt = num(values.altitude_m);
      this.state.position = { lat, lon, ...(alt !== undefined ? { altitude_m: alt } : {}) };
    } else if (values.gps_fix === false) {
      this.state.position = null;
    }
  }
}
