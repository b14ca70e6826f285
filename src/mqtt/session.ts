// A long-lived MQTT connection: one mqtt.js client whose connections a session actor opens and reopens; it keeps its stores across reconnects
// The client's own retries are off: only the session actor reconnects.
import type { IClientOptions, IClientPublishOptions, IPublishPacket, MqttClient } from 'mqtt';
import { reconnectOptions, type RandomSource, type ReconnectOptions } from '../backoff.js';
import type { LinkConnector, LinkEvent, StreamLink } from '../cloud/link.js';
import type { StreamState } from '../cortex/events.js';
import { CortexError } from '../errors.js';
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

/** A state of the session actor as its engine reports it (actors/streams/session-machine.ts's `mqtt.state`). */
export interface EngineState {
  state: StreamState;
  attempt?: number;
  delay_ms?: number;
  reason?: string;
}

export interface SessionOptions {
  settings: BrokerSettings;
  /** Client options besides the broker's: clientId, clean, will, session properties. */
  client?: Partial<IClientOptions>;
  /** The reconnect policy the session actor applies (src/backoff.ts); a CONNACK makes a connection healthy. */
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
  /** Published (QoS 1, retained) before the clean DISCONNECT when the owner's session actor stops (the fleet's `offline` status). */
  lastWords?(): { topic: string; payload: string } | undefined;
  /** Given the asynchronous end of the client when the session actor closes it, so its owner can wait for it. */
  track?(closing: Promise<unknown>): void;
  /**
   * The owner ends the client itself (`stop()`), after the session actor stopped: the `mqtt`
   * connector, whose motion stop must still go out when its action actor stops. Default: the session
   * actor's closing of the link ends the session.
   */
  ownerCloses?: boolean;
  /** mqtt.js's `connect` (injected so this module loads the client only when a session starts). */
  connect: (url: string, options: IClientOptions) => MqttClient;
}

/** A connection attempt that failed; `fatal` when retrying with the same settings cannot succeed. */
export class MqttConnectError extends CortexError {
  readonly fatal: boolean;
  constructor(failure: MqttFailure) {
    super('mqtt_connect', failure.message);
    this.name = 'MqttConnectError';
    this.fatal = failure.fatal;
  }
}

/** Close code of a link whose connection dropped (the WebSocket code for an abnormal close; MQTT has none). */
const DROPPED = 1006;

/**
 * One client for the life of the session, and no retry of its own: `connect` is the LinkConnector of
 * a session actor (actors/streams/mqtt-session.ts runs actors/streams/session-machine.ts on it), which
 * waits the backoff of src/backoff.ts between attempts and calls `connect` again. The first call dials,
 * later ones reconnect the same client with the same stores, so QoS 1 messages in flight survive and
 * a persistent session resumes. A refusal that retrying cannot fix (bad credentials, an untrusted
 * certificate) is a fatal error: the actor ends in `failed` with the reason.
 */
export class MqttSession {
  private client: MqttClient | undefined;
  private lastFailure: MqttFailure | undefined;
  private ending: Promise<void> | undefined;
  private state: SessionState = 'connecting';
  readonly label: string;
  /** The policy the session actor applies. */
  readonly policy: ReconnectOptions;

  constructor(private readonly options: SessionOptions) {
    this.label = brokerLabel(options.settings.url);
    this.policy = options.reconnect ?? reconnectOptions();
  }

  get random(): RandomSource | undefined {
    return this.options.random;
  }

  get connected(): boolean {
    return this.client?.connected === true;
  }

  get current(): SessionState {
    return this.state;
  }

  /** Reads the certificate files now: throws MqttSetupError when one cannot be read (before any actor runs). */
  check(): void {
    clientOptions(this.options.settings, this.options.client);
  }

  /**
   * Opens a connection: resolves at its CONNACK with the link the session actor watches; rejects with
   * MqttConnectError (fatal or not) when it closes first, or with the signal's reason when aborted.
   */
  readonly connect: LinkConnector = (signal) =>
    new Promise<StreamLink>((resolve, reject) => {
      if (this.ending) return reject(new MqttConnectError({ message: `the session with ${this.label} is stopped`, fatal: true }));
      if (signal.aborted) return reject(signal.reason);
      let client: MqttClient;
      try {
        client = this.client ?? this.create();
      } catch (err) {
        return reject(Object.assign(err as Error, { fatal: true }));
      }
      if (client !== this.client) this.client = client;
      // The same stores: unacknowledged QoS 1 messages are sent again, received ones not handled twice.
      else client.reconnect({ incomingStore: client.incomingStore, outgoingStore: client.outgoingStore });
      const done = () => {
        client.off('connect', onConnect);
        client.off('close', onClose);
        signal.removeEventListener('abort', onAbort);
      };
      const onConnect = () => {
        done();
        resolve(this.link(client));
      };
      const onClose = () => {
        done();
        reject(new MqttConnectError(this.takeFailure('connection closed')));
      };
      const onAbort = () => {
        done();
        client.end(true);
        reject(signal.reason);
      };
      client.on('connect', onConnect);
      client.on('close', onClose);
      signal.addEventListener('abort', onAbort, { once: true });
    });

  /** The client, made once, with the handlers it keeps for its life. */
  private create(): MqttClient {
    const opts = clientOptions(this.options.settings, this.options.client);
    const client = this.options.connect(this.options.settings.url, opts);
    client.on('connect', (connack) => {
      noDelay(client);
      this.lastFailure = undefined;
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
    return client;
  }

  private takeFailure(fallback: string): MqttFailure {
    const failure = this.lastFailure ?? { message: `${this.label}: ${fallback}`, fatal: false };
    this.lastFailure = undefined;
    return this.ending ? { message: 'stopped', fatal: true } : failure;
  }

  /** The open connection as the session actor sees it: its close (fatal or not); closing it stops the session. */
  private link(client: MqttClient): StreamLink {
    let listener: ((event: LinkEvent) => void) | undefined;
    let closed: LinkEvent | undefined;
    const onClose = () => {
      client.off('close', onClose);
      const f = this.takeFailure('the connection closed');
      closed = { type: 'close', code: DROPPED, reason: f.message, ...(f.fatal ? { fatal: true } : {}) };
      listener?.(closed);
    };
    client.on('close', onClose);
    return {
      bufferedAmount: () => 0,
      subscribe: (l) => {
        listener = l;
        // Closed between the CONNACK and the actor's watch: said now.
        if (closed) queueMicrotask(() => listener?.(closed!));
        return () => {
          listener = undefined;
        };
      },
      close: () => {
        if (closed || this.options.ownerCloses) return;
        client.off('close', onClose);
        const ending = this.stop(this.options.lastWords?.());
        this.options.track?.(ending);
      },
    };
  }

  /** What the session actor reports (its `mqtt.state` events); `connected` is reported at the CONNACK itself. */
  engineState(e: EngineState): void {
    if (e.state === 'streaming' || e.state === 'stopped') return;
    this.report({
      state: e.state,
      ...(e.attempt !== undefined ? { attempt: e.attempt } : {}),
      ...(e.delay_ms !== undefined ? { delayMs: e.delay_ms } : {}),
      // The client's own words name the broker and the cause; the engine's `connect failed: ` adds nothing.
      ...(e.reason !== undefined ? { reason: e.reason.replace(/^connect failed: /, '') } : {}),
    });
  }

  private report(r: SessionReport): void {
    if (this.ending && r.state !== 'stopped') return;
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
    if (!client || this.ending) return Promise.reject(new Error(`not connected to ${this.label}`));
    return this.send(client, topic, payload, publishOptions, queue === true);
  }

  private send(client: MqttClient, topic: string, payload: string | Buffer, opts: IClientPublishOptions, queue: boolean): Promise<void> {
    if (!client.connected && !queue) return Promise.reject(new Error(`not connected to ${this.label}`));
    return new Promise((resolve, reject) => {
      client.publish(topic, payload, opts, (err) => (err ? reject(new Error(describeOperationError(err, `publish to ${topic}`))) : resolve()));
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
   * clean DISCONNECT; bounded by `ms`, after which the socket is destroyed. Safe to call twice (the
   * second call waits for the first). A session actor still running afterwards ends in `failed`.
   */
  stop(last?: { topic: string; payload: string }, ms = 2000): Promise<void> {
    this.ending ??= this.end(last, ms);
    return this.ending;
  }

  private async end(last: { topic: string; payload: string } | undefined, ms: number): Promise<void> {
    const client = this.client;
    const connected = client?.connected === true;
    if (client && last && connected)
      await withTimeout(
        this.send(client, last.topic, last.payload, { qos: 1, retain: true }, false).catch(() => undefined),
        ms / 2,
      );
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
