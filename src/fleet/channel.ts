// The fleet channel of one robot: reads the bus, publishes status, state, events and metrics to the broker, and carries out the commands it receives.
import mqtt, { type IPublishPacket } from 'mqtt';
import type { Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { FleetSettings } from '../config/fleet.js';
import type { AgentBus, AgentEvent } from '../cortex/events.js';
import { describeError } from '../errors.js';
import { reconnectOptions, type ReconnectOptions } from '../backoff.js';
import { MqttSession, type SessionReport } from '../mqtt/session.js';
import { executeCommand, type FleetControl, type ReloadHandler } from './execute.js';
import { EventBudget, operatorEvent } from './events.js';
import { CommandGuard } from './guard.js';
import { CommandInbox } from './inbox.js';
import { MetricsFold } from './metrics.js';
import { FleetCommand, MAX_COMMAND_BYTES, MAX_PACKET_BYTES, parsePayload, topicOf, type FleetReply, type TopicKind } from './protocol.js';
import { StateReducer } from './state.js';
import { admit, trustOf, type FleetTrust } from './trust.js';
import { probeAnonymous, type Anonymity } from '../mqtt/anonymous-probe.js';

export type { FleetControl, ReloadHandler } from './execute.js';

export interface FleetChannelOptions {
  settings: FleetSettings;
  /** The agent's bus: the one source of what is published; the channel reports its own link and commands on it. */
  bus: AgentBus;
  control: FleetControl;
  version: string;
  configSha256?: string;
  /** Checks and applies a new configuration (`cortexd run` owns it); absent: reload is refused. */
  reload?: ReloadHandler;
  /** Ids of commands seen; one per process (it outlives reloads). Default: in memory. */
  guard?: CommandGuard;
  logger?: Logger;
  /** Reconnect policy; default src/backoff.ts's with `backoff_max_ms` as the cap. */
  reconnect?: ReconnectOptions;
  /** Commands that may wait in the inbox (default INBOX_CAPACITY); more are refused with a count. */
  inboxCapacity?: number;
  /** Why the agent is stopping, for the `offline` status published when the session actor closes the connection. */
  stopReason?: () => string;
  /** Given the client's asynchronous end when the session actor closes it. */
  track?: (closing: Promise<unknown>) => void;
  /** Whom the robot believes, decided from its own file at start (a reload cannot change it); default: from `settings`. */
  trust?: FleetTrust;
}

/** Commands that may wait behind the one running: a minute of commands at one a second, and a bounded few kilobytes each. */
export const INBOX_CAPACITY = 64;

/** Longest the channel handles received commands before the event loop runs (the e-stop socket, the tick). */
export const INTAKE_SLICE_MS = 10;

type Pending = { cmd: FleetCommand; correlation: Buffer | undefined };

/**
 * One robot on the broker. Topics are `<prefix>/<robot>/<kind>` (src/fleet/protocol.ts). On every
 * connect it publishes `status: online` and its state (both retained) and, when the broker lost its
 * session, subscribes to its commands at QoS 1 again; the last will is `status: offline`. While the
 * broker is unreachable the robot works on: state changes are kept (the newest state goes out on
 * reconnect), events are dropped and counted, metrics wait. Commands run one after another in the
 * order received, except `estop` and `release`, which never wait behind another command. Intake is
 * cheap and bounded: a payload larger than MAX_COMMAND_BYTES is refused before it is parsed (and the
 * broker is told not to send packets above MAX_PACKET_BYTES at all), at most `inboxCapacity` commands
 * wait (more are refused with a count, on the bus and in the state), and the ids seen reach disk in
 * batches off this path (src/fleet/guard.ts).
 */
export class FleetChannel {
  private readonly session: MqttSession;
  private readonly reducer: StateReducer;
  private readonly metrics: MetricsFold;
  private readonly budget = new EventBudget();
  private readonly guard: CommandGuard;
  private readonly robot: string;
  private sub: Subscription | undefined;
  private metricsTimer: NodeJS.Timeout | undefined;
  private stateScheduled = false;
  private fullRefused = 0;
  private fullTimer: NodeJS.Timeout | undefined;
  private inboxTimer: NodeJS.Timeout | undefined;
  private readonly inbox: CommandInbox<Pending>;
  private offlineDrops = 0;
  /** Refusals already reported on this connection (an ACL refusal repeats on every publish). */
  private reported = new Set<string>();
  private stopped = false;
  private readonly trust: FleetTrust;
  /** Whether the broker lets in clients without credentials: asked once, at the first connect. */
  private anonymity: Promise<Anonymity> | undefined;

  constructor(private readonly options: FleetChannelOptions) {
    const { settings, control } = options;
    this.robot = settings.robotId;
    this.guard = options.guard ?? new CommandGuard({ maxTtlMs: settings.commandMaxTtlMs });
    this.trust = options.trust ?? trustOf(settings);
    this.reducer = new StateReducer({
      robot: this.robot,
      config: control.configName,
      ...(options.configSha256 ? { configSha256: options.configSha256 } : {}),
      version: options.version,
      mode: control.currentMode(),
      modes: Object.fromEntries(
        Object.entries(control.config.modes).map(([name, m]) => [
          name,
          { inputs: m.agent_inputs.map((i) => i.type), actions: m.agent_actions.map((a) => a.llm_label) },
        ]),
      ),
      estopEngaged: control.safetyStatus().estop !== null,
      now: Date.now(),
    });
    this.metrics = new MetricsFold(this.robot);
    this.inbox = new CommandInbox<Pending>({
      capacity: options.inboxCapacity ?? INBOX_CAPACITY,
      run: (p) => this.run(p),
      // The inbox's counts go out with the state at most once a second (a flood changes them per command).
      onChange: () => {
        if (this.inboxTimer) return;
        this.inboxTimer = setTimeout(() => {
          this.inboxTimer = undefined;
          if (this.reducer.setInbox(this.inbox.stats)) this.scheduleState();
        }, 1000);
      },
    });
    this.reducer.setInbox(this.inbox.stats);
    this.session = new MqttSession({
      settings,
      connect: (url, opts) => mqtt.connect(url, opts),
      reconnect: options.reconnect ?? reconnectOptions({ backoff: { maxMs: settings.backoffMaxMs } }),
      client: {
        clientId: `cortexd_${this.robot}`,
        clean: false,
        // The broker sends nothing larger (a 200 MB publish to this robot is dropped at the broker, not buffered here).
        properties: { sessionExpiryInterval: settings.sessionExpiryS, maximumPacketSize: MAX_PACKET_BYTES },
        will: {
          topic: this.topic('status'),
          payload: Buffer.from(JSON.stringify({ status: 'offline', robot: this.robot, reason: 'connection lost' })),
          qos: 1,
          retain: true,
        },
      },
      onReport: (r) => this.onReport(r),
      onConnect: (sessionPresent) => this.onConnect(sessionPresent),
      onMessage: (topic, payload, packet) => this.onMessage(topic, payload, packet),
      sliceMs: INTAKE_SLICE_MS,
      lastWords: () => this.offline(this.options.stopReason?.() ?? 'stopped'),
      ...(options.track ? { track: options.track } : {}),
    });
  }

  /**
   * The broker connection. Its session actor (actors/streams/mqtt-session.ts: the session machine
   * with the one backoff) dials and redials it; the owner runs it: the `fleet` actor as its child
   * `mqtt` (system id `fleet/mqtt`), or `runMqttSession` outside an agent.
   */
  get connection(): MqttSession {
    return this.session;
  }

  private offline(reason: string): { topic: string; payload: string } {
    return { topic: this.topic('status'), payload: JSON.stringify({ status: 'offline', robot: this.robot, at: Date.now(), reason }) };
  }

  topic(kind: TopicKind): string {
    return topicOf(this.options.settings.prefix, this.robot, kind);
  }

  /**
   * Subscribes to the bus and starts the metrics. The connection's session actor dials the broker (a
   * certificate file that cannot be read ends it in `failed` with the reason, reported, never thrown).
   */
  start(): void {
    this.sub = this.options.bus.events$.subscribe((e) => this.onEvent(e));
    const every = this.options.settings.metricsIntervalMs;
    if (every > 0) this.metricsTimer = setInterval(() => this.publishMetrics(), every);
  }

  /** Publishes `status: offline` (retained) when connected, then disconnects cleanly; bounded by `ms`. */
  async stop(reason = 'stopped', ms = 2000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.metricsTimer);
    clearTimeout(this.inboxTimer);
    clearTimeout(this.fullTimer);
    this.sub?.unsubscribe();
    for (const p of this.inbox.stop())
      this.answer({ id: p.cmd.id, command: p.cmd.command, ok: false, reason: `not run: the agent is stopping (${reason})` }, p.correlation);
    await this.session.stop(this.offline(reason), ms);
  }

  private emit(r: Omit<SessionReport, 'delayMs' | 'sessionPresent'> & { delayMs?: number; sessionPresent?: boolean }): void {
    this.options.bus.emit({
      type: 'fleet',
      at: Date.now(),
      state: r.state,
      broker: this.session.label,
      robot: this.robot,
      ...(r.attempt !== undefined ? { attempt: r.attempt } : {}),
      ...(r.delayMs !== undefined ? { delay_ms: r.delayMs } : {}),
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...(r.sessionPresent !== undefined ? { session_present: r.sessionPresent } : {}),
    });
    if (r.state === 'failed') this.options.logger?.error(`fleet: ${r.reason ?? 'failed'}`);
    else if (r.state === 'backingOff' && r.attempt === 2) this.options.logger?.warn(`fleet: ${r.reason ?? 'disconnected'}; retrying`);
  }

  private onReport(r: SessionReport): void {
    if (this.stopped && r.state !== 'stopped') return;
    this.emit(r);
  }

  private onConnect(sessionPresent: boolean): void {
    this.reported.clear();
    this.anonymity ??= this.askAnonymity();
    const status = { status: 'online', robot: this.robot, at: Date.now(), version: this.options.version, config: this.options.control.configName };
    this.publish('status', JSON.stringify(status), { qos: 1, retain: true });
    this.publishState();
    if (!sessionPresent) {
      this.session.subscribe({ [this.topic('commands')]: { qos: 1 } }).catch((err) => this.refused(describeError(err)));
    }
  }

  private onEvent(e: AgentEvent): void {
    this.metrics.apply(e);
    if (this.reducer.apply(e)) this.scheduleState();
    // The channel's own refusals stay off the events topic (publishing them could be refused in turn).
    if (e.type === 'error' && e.source === 'fleet') return;
    const out = operatorEvent(e, this.options.settings.shareTranscripts);
    if (!out) return;
    if (!this.session.connected) {
      this.offlineDrops += 1;
      return;
    }
    if (this.budget.take()) this.publish('events', JSON.stringify(out), { qos: 0 });
  }

  /** Changes within one turn of the event loop go out as one retained message. */
  private scheduleState(): void {
    if (this.stateScheduled) return;
    this.stateScheduled = true;
    setImmediate(() => {
      this.stateScheduled = false;
      this.publishState();
    });
  }

  private publishState(): void {
    if (this.stopped || !this.session.connected) return;
    this.publish('state', JSON.stringify(this.reducer.current), { qos: 1, retain: true });
  }

  private publishMetrics(): void {
    if (!this.session.connected) return;
    this.publish('metrics', JSON.stringify(this.metrics.take(Date.now(), this.budget.dropped + this.offlineDrops)), { qos: 0 });
  }

  private publish(kind: TopicKind, payload: string, opts: { qos: 0 | 1; retain?: boolean; queue?: boolean; properties?: IPublishPacket['properties'] }): void {
    this.session.publish(this.topic(kind), payload, opts).catch((err) => {
      if (!this.stopped && this.session.connected) this.refused(describeError(err));
    });
  }

  /** A publish or subscribe the broker refused: once per reason and connection, on the bus and in the log. */
  private refused(message: string): void {
    if (this.reported.has(message)) return;
    this.reported.add(message);
    this.options.logger?.warn(`fleet: ${message}`);
    this.options.bus.emit({ type: 'error', at: Date.now(), source: 'fleet', message });
  }

  private onMessage(topic: string, payload: Buffer, packet: IPublishPacket): void {
    if (topic !== this.topic('commands')) return;
    const correlation = packet.properties?.correlationData;
    if (payload.length > MAX_COMMAND_BYTES) {
      this.inbox.tooLarge();
      const head = payload.subarray(0, 512).toString('latin1');
      const reason = `too large: ${payload.length} bytes, a command is at most ${MAX_COMMAND_BYTES} bytes (refused before parsing)`;
      this.answer(
        {
          id: /"id"\s*:\s*"([A-Za-z0-9_.:-]{8,128})"/.exec(head)?.[1] ?? '',
          command: /"command"\s*:\s*"([a-z]{1,20})"/.exec(head)?.[1] ?? 'unknown',
          ok: false,
          reason,
        },
        correlation,
      );
      return;
    }
    const parsed = parsePayload(FleetCommand, payload);
    if (!parsed.ok) {
      const id = peekId(payload);
      this.answer({ id: id ?? '', command: peekCommand(payload) ?? 'unknown', ok: false, reason: `invalid command: ${parsed.reason}` }, correlation);
      return;
    }
    const cmd = parsed.value;
    const urgent = cmd.command === 'estop' || cmd.command === 'release';
    // A full inbox refuses before the id is remembered: the same command may be sent again later.
    const stats = this.inbox.stats;
    if (!urgent && stats.queued >= stats.capacity) {
      const offer = this.inbox.offer({ cmd, correlation }, false);
      if (!offer.ok) this.answer({ id: cmd.id, command: cmd.command, ok: false, reason: offer.reason }, correlation, true);
      return;
    }
    const admitted = this.guard.admit(cmd);
    if (!admitted.ok) {
      this.answer({ id: cmd.id, command: cmd.command, ok: false, reason: admitted.reason }, correlation);
      return;
    }
    this.options.logger?.info(`fleet: command ${cmd.command} ${cmd.id}${cmd.from ? ` from ${cmd.from}` : ''}`);
    const offer = this.inbox.offer({ cmd, correlation }, urgent);
    if (!offer.ok) this.answer({ id: cmd.id, command: cmd.command, ok: false, reason: offer.reason }, correlation);
  }

  private countFull(): void {
    this.fullRefused += 1;
    if (this.fullTimer) return;
    this.fullTimer = setTimeout(() => {
      this.fullTimer = undefined;
      const n = this.fullRefused;
      this.fullRefused = 0;
      const reason = `inbox full: ${n} command${n === 1 ? '' : 's'} refused in the last second (at most ${this.inbox.stats.capacity} wait; estop and release never wait)`;
      this.options.logger?.warn(`fleet: ${reason}`);
      this.options.bus.emit({ type: 'fleet.command', at: Date.now(), id: '', command: 'any', ok: false, reason });
    }, 1000);
  }

  /** Asks the broker once whether it lets anyone in; an open broker is said on the bus and in the log. */
  private async askAnonymity(): Promise<Anonymity> {
    const a = await probeAnonymous(this.options.settings);
    if (a === 'open') {
      const message = `the broker lets in clients without credentials: ${this.trust.acceptAnonymousBroker ? 'commands accepted (fleet.accept_anonymous_broker), releases and safety-relaxing reloads only when signed' : 'every fleet command but estop is refused unless signed'}`;
      this.options.logger?.warn(`fleet: ${message}`);
      this.options.bus.emit({ type: 'error', at: Date.now(), source: 'fleet', message });
    }
    return a;
  }

  private async run({ cmd, correlation }: Pending): Promise<void> {
    // An estop never waits for the broker's answer; other commands are judged by it.
    const anonymity = cmd.command === 'estop' ? 'unknown' : await (this.anonymity ??= this.askAnonymity());
    const admitted = admit(cmd, this.robot, this.trust, anonymity);
    if (!admitted.ok) {
      this.answer({ id: cmd.id, command: cmd.command, ok: false, reason: admitted.reason }, correlation);
      return;
    }
    const result = await executeCommand(cmd, {
      control: this.options.control,
      sender: admitted.sender,
      ...(admitted.key ? { key: admitted.key } : {}),
      ...(this.options.reload ? { reload: this.options.reload } : {}),
    });
    this.answer({ id: cmd.id, command: cmd.command, ...result }, correlation);
  }

  /**
   * Replies on the replies topic (queued in the client if the link dropped meanwhile) and reports on
   * the bus; refusals of a full inbox (`summarize`) are reported on the bus as one event a second with
   * their count, so a flood does not become a flood of events too.
   */
  private answer(r: Omit<FleetReply, 'robot' | 'at'>, correlation?: Buffer, summarize = false): void {
    const reply: FleetReply = { ...r, robot: this.robot, at: Date.now() };
    if (summarize) this.countFull();
    else
      this.options.bus.emit({
        type: 'fleet.command',
        at: reply.at,
        id: r.id,
        command: r.command,
        ok: r.ok,
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
      });
    if (this.stopped) return;
    this.publish('replies', JSON.stringify(reply), { qos: 1, queue: true, ...(correlation ? { properties: { correlationData: correlation } } : {}) });
  }
}

function peekId(payload: Buffer): string | undefined {
  try {
    const id = (JSON.parse(payload.toString()) as { id?: unknown }).id;
    return typeof id === 'string' && id.length <= 128 ? id : undefined;
  } catch {
    return undefined;
  }
}

function peekCommand(payload: Buffer): string | undefined {
  try {
    const c = (JSON.parse(payload.toString()) as { command?: unknown }).command;
    return typeof c === 'string' ? c.slice(0, 40) : undefined;
  } catch {
    return undefined;
  }
}
