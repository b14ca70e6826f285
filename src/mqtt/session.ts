// A long-lived MQTT connection: mqtt.js without its own retries, reconnected with the project's one backoff; keeps its session stores across reconnects.
import type { IClientOptions, IClientPublishOptions, IPublishPacket, MqttClient } from 'mqtt';
import {
  INITIAL_RECONNECT,
  connectionHealthy,
  connectionOpened,
  planReconnect,
  reconnectOptions,
  type RandomSource,
  type ReconnectOptions,
  type ReconnectState,
} from '../backoff.js';
import { clientOptions, describeConnectError, describeOperationError, type MqttFailure } from './options.js';
import { brokerLabel, type BrokerSettings } from '../plugins/schemas/broker.js';

export type SessionState = 'connecting' | 'connected' | 'backingOff' | 'failed' | 'stopped';

export interface SessionReport {
  state: SessionState;
  /** Attempt number since the last healthy connection (connecting, backingOff). */
  attempt?: number;
  delayMs?: number;
  reason?: string;
  /** connected: the broker kept this client's session (its subscriptions and queued messages). */
  sessionPresent?: boolean;
}

export interface SessionOptions {
  settings: BrokerSettings;
  /** Client options besides the broker's: clientId, clean, will, session properties. */
  client?: Partial<IClientOptions>;
  /** The reconnect policy (src/backoff.ts); a CONNACK makes a connection healthy. */
  reconnect?: ReconnectOptions;
  random?: RandomSource;
  onReport?(report: SessionReport): void;
  /** Called after every CONNACK, before queued messages are handled (subscribe here when the session is new). */
  onConnect?(sessionPresent: boolean): void;
  onMessage?(topic: string, payload: Buffer, packet: IPublishPacket): void;
  /**
   * Longest the client may spend handling received messages before it lets the event loop run
   * (the fleet channel: 10 ms). A flood arrives in megabyte reads; without this, one read is handled
   * to its end while timers and sockets (the e-stop's) wait. The client reads on after the pause, and
   * the broker holds what the client has not read yet. Default: no pause.
   */
  sliceMs?: number;
  /** mqtt.js's `connect` (injected so this module loads the client only when a session starts). */
  connect: (url: string, options: IClientOptions) => MqttClient;
}

/**
 * One client for the life of the session. A dropped connection or a failed attempt waits the
 * backoff (`planReconnect`: a healthy connection is replaced at once, failures wait 500 ms doubling
 * to the cap, with jitter, and a quick-failure breaker) and reconnects with the same stores, so
 * QoS 1 messages in flight survive and a persistent session resumes. A refusal that retrying cannot
 * fix (bad credentials, an untrusted certificate) ends it in `failed` with the reason.
 */
export class MqttSession {
  private client: MqttClient | undefined;
  private policy: ReconnectState = { ...INITIAL_RECONNECT };
  private timer: NodeJS.Timeout | undefined;
  private lastFailure: MqttFailure | undefined;
  private stopping = false;
  private state: SessionState = 'connecting';
  readonly label: string;
  private readonly reconnect: ReconnectOptions;

  constructor(private readonly options: SessionOptions) {
    this.label = brokerLabel(options.settings.url);
    this.reconnect = options.reconnect ?? reconnectOptions();
  }

  get connected(): boolean {
    return this.client?.connected === true;
  }

  get current(): SessionState {
    return this.state;
  }

  /** Dials the broker; throws MqttSetupError when a certificate file cannot be read. */
  start(): void {
    const opts = clientOptions(this.options.settings, this.options.client);
    this.report({ state: 'connecting', attempt: this.policy.attempt });
    const client = this.options.connect(this.options.settings.url, opts);
    this.client = client;
    client.on('connect', (connack) => {
      noDelay(client);
      this.lastFailure = undefined;
      this.policy = connectionHealthy(connectionOpened(this.policy, Date.now()));
      this.report({ state: 'connected', sessionPresent: connack.sessionPresent });
      this.options.onConnect?.(connack.sessionPresent);
    });
    client.on('message', (topic, payload, packet) => this.options.onMessage?.(topic, payload, packet));
    const slice = this.options.sliceMs;
    if (slice !== undefined) {
      // mqtt.js handles the next received packet only when this calls back: past the slice, a turn of the event loop first.
      let since = performance.now();
      client.handleMessage = (_packet, callback) => {
        if (performance.now() - since < slice) return callback();
        setImmediate(() => {
          since = performance.now();
          callback();
        });
      };
    }
    client.on('error', (err) => {
      this.lastFailure = describeConnectError(err, this.options.settings.url, this.options.settings.username);
    });
    // The broker's DISCONNECT (MQTT 5) says why it dropped us (session taken over, server shutting down).
    client.on('disconnect', (packet) => {
      const code = packet.reasonCode ?? 0;
      if (code !== 0) this.lastFailure = describeConnectError({ code }, this.options.settings.url, this.options.settings.username);
    });
    client.on('close', () => this.onClose());
  }

  private onClose(): void {
    if (this.stopping || this.state === 'failed') return;
    const failure = this.lastFailure;
    this.lastFailure = undefined;
    if (failure?.fatal) {
      this.report({ state: 'failed', reason: failure.message });
      this.client?.end(true);
      return;
    }
    const plan = planReconnect(this.policy, Date.now(), this.reconnect, this.options.random);
    this.policy = plan.state;
    const reason = failure?.message ?? `the connection to ${this.label} closed`;
    if (plan.kind !== 'reconnect' || plan.delayMs > 0) this.report({ state: 'backingOff', attempt: plan.attempt, delayMs: plan.delayMs, reason });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopping || !this.client) return;
      this.report({ state: 'connecting', attempt: plan.attempt, reason });
      // The same stores: unacknowledged QoS 1 messages are sent again, received ones not handled twice.
      this.client.reconnect({ incomingStore: this.client.incomingStore, outgoingStore: this.client.outgoingStore });
    }, plan.delayMs);
  }

  private report(r: SessionReport): void {
    this.state = r.state;
    this.options.onReport?.(r);
  }

  /**
   * Publishes when connected and resolves once the broker took it (QoS 1: its PUBACK); rejects with
   * the broker's reason (`not authorized` from an ACL). While disconnected it rejects at once unless
   * `queue` (the message then waits in the client until the next connection).
   */
  publish(topic: string, payload: string | Buffer, opts: IClientPublishOptions & { queue?: boolean } = {}): Promise<void> {
    const { queue, ...publishOptions } = opts;
    const client = this.client;
    if (!client || this.stopping) return Promise.reject(new Error(`not connected to ${this.label}`));
    if (!client.connected && !queue) return Promise.reject(new Error(`not connected to ${this.label}`));
    return new Promise((resolve, reject) => {
      client.publish(topic, payload, publishOptions, (err) => (err ? reject(new Error(describeOperationError(err, `publish to ${topic}`))) : resolve()));
    });
  }

  /** Subscribes; rejects when the broker refuses a filter (reason code at or above 128). */
  subscribe(filters: Record<string, { qos: 0 | 1 | 2 }>): Promise<void> {
    const client = this.client;
    if (!client) return Promise.reject(new Error(`not connected to ${this.label}`));
    return new Promise((resolve, reject) => {
      client.subscribe(filters, (err, granted) => {
        if (err) return reject(new Error(describeOperationError(err, `subscribe to ${Object.keys(filters).join(', ')}`)));
        const refused = (granted ?? []).filter((g) => g.qos >= 128);
        if (refused.length > 0)
          return reject(new Error(describeOperationError({ code: refused[0]!.qos }, `subscribe to ${refused.map((g) => g.topic).join(', ')}`)));
        resolve();
      });
    });
  }

  /**
   * Ends the session: `last` (a retained `offline` status) is published first when connected, then a
   * clean DISCONNECT; bounded by `ms`, after which the socket is destroyed. Safe to call twice.
   */
  async stop(last?: { topic: string; payload: string }, ms = 2000): Promise<void> {
    if (this.stopping) return;
    clearTimeout(this.timer);
    const client = this.client;
    const connected = client?.connected === true;
    if (last && connected)
      await withTimeout(
        this.publish(last.topic, last.payload, { qos: 1, retain: true }).catch(() => undefined),
        ms / 2,
      );
    this.stopping = true;
    if (client)
      await withTimeout(
        client.endAsync(!connected).catch(() => undefined),
        ms / 2,
      ).then((done) => (done ? undefined : client.end(true)));
    this.state = 'stopped';
    this.options.onReport?.({ state: 'stopped' });
  }
}

/**
 * Small messages go out at once: without this, Nagle's algorithm holds a second small write (a reply
 * right after an event) until the broker's delayed ACK, about 40 ms on Linux.
 */
export function noDelay(client: MqttClient): void {
  (client.stream as { setNoDelay?: (on: boolean) => void } | undefined)?.setNoDelay?.(true);
}

/** Resolves true when `p` settled within `ms`, false when the time ran out first. */
async function withTimeout(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
