// The `mqtt` connector of move, face and speak: each command published as JSON to a topic, done when the broker acknowledged it.
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';
import type { Logger } from 'pino';
import { BehaviorSubject, filter, firstValueFrom, fromEvent, map, merge, mergeMap, throwError, timeout } from 'rxjs';
import type { ActionConnector, ConnectorFactory } from '../../../src/cortex/action.js';
import { CortexError } from '../../../src/errors.js';
import { MqttSession, type SessionReport } from '../../../src/mqtt/session.js';
import { mqttSessionInput } from '../../streams/mqtt-session.js';
import { parseBrokerUrl } from '../../../src/plugins/schemas/broker.js';
import { MqttConnectorOptions } from '../../../src/plugins/schemas/mqtt.js';

/*
 * Message on `topic`, one per command (JSON):
 *   {"action": "move", "value": {"action": "turn left"}, "id": "<uuid>", "at": 1700000000000}
 * and, when a running command is interrupted (move by default, `send_stop`):
 *   {"action": "move", "stop": true, "id": "<uuid of the interrupted command>", "at": ...}
 * A microcontroller (or ROS 2's MQTT bridge) subscribes to the topic. With QoS 1 a command is done
 * when the broker acknowledged it; the connector does not wait for the device itself.
 * The connection is kept for the life of the action and reconnected by its session actor (the action
 * actor's child `session`: the session machine with src/backoff.ts); a command
 * sent while it is down fails at once with the reason (a motion command must not arrive late).
 */

/** A command the broker did not take (no connection, refused by the ACL, no acknowledgement in time). */
export class MqttCommandError extends CortexError {
  constructor(message: string) {
    super('mqtt_command', message);
    this.name = 'MqttCommandError';
  }
}

export function createMqttConnector(action: 'move' | 'face' | 'speak'): ConnectorFactory {
  return (config, ctx): ActionConnector => {
    const o = MqttConnectorOptions.parse(config ?? {});
    const parsed = parseBrokerUrl(o.url);
    if (!parsed.ok) throw new MqttCommandError(`mqtt ${action}: url: ${parsed.message}`);
    const sendStop = o.send_stop ?? action === 'move';
    /** The session's reports, the latest first to a new subscriber: a command waits on them for the connection (a waiter at stop gets its `stopped`). */
    const reports$ = new BehaviorSubject<SessionReport | undefined>(undefined);
    const session = mqttSessionOf(action, o, parsed, reports$, ctx.logger);
    const link: Link = { action, o, session, reports$, sendStop };
    /** Whether the last thing published was a stop (a halt right after a halt publishes nothing more). */
    let halted = false;
    return {
      name: 'mqtt',
      async run(value, signal) {
        halted = false;
        await publishCommand(link, value, signal);
      },
      // The action actor runs it as its child `session` (actors/streams/session-machine.ts), which reconnects with src/backoff.ts.
      session: mqttSessionInput(session),
      stop: () => session.stop(undefined, 1000),
      // move (a motion connector): the safety governor's stop is `{action, stop: true}` on the same
      // topic, published without waiting for the broker; the device must stop on it (docs/actions.md, "MQTT connector").
      ...(sendStop
        ? {
            async halt() {
              if (halted) return;
              halted = true;
              publishHalt(link, ctx.logger);
            },
          }
        : {}),
    };
  };
}

/** What a command of one connector needs: its action, options, session and the session's reports. */
interface Link {
  readonly action: 'move' | 'face' | 'speak';
  readonly o: MqttConnectorOptions;
  readonly session: MqttSession;
  readonly reports$: BehaviorSubject<SessionReport | undefined>;
  /** Whether an interrupted command and a halt publish `{action, stop: true}`. */
  readonly sendStop: boolean;
}

/** Builds the connector's MQTT session from its options, reporting into `reports$` and logging failures. */
function mqttSessionOf(
  action: Link['action'],
  o: MqttConnectorOptions,
  parsed: Extract<ReturnType<typeof parseBrokerUrl>, { ok: true }>,
  reports$: BehaviorSubject<SessionReport | undefined>,
  logger: Logger,
): MqttSession {
  const username = o.username ?? parsed.username;
  const password = o.password ?? parsed.password;
  return new MqttSession({
    settings: {
      url: parsed.url,
      ...(username !== undefined ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(o.ca_file ? { caFile: o.ca_file } : {}),
      ...(o.cert_file ? { certFile: o.cert_file } : {}),
      ...(o.key_file ? { keyFile: o.key_file } : {}),
      ...(o.keepalive_seconds ? { keepaliveS: o.keepalive_seconds } : {}),
    },
    client: { clientId: `cortexd-${action}-${randomUUID().slice(0, 8)}`, clean: true },
    ownerCloses: true,
    connect: (url, opts) => mqtt.connect(url, opts),
    onReport: (r) => {
      reports$.next(r);
      if (r.state === 'failed') logger.error(`mqtt ${action}: ${r.reason ?? 'failed'}`);
      else if (r.state === 'backingOff' && r.attempt === 2) logger.warn(`mqtt ${action}: ${r.reason ?? 'disconnected'}; retrying`);
    },
  });
}

/**
 * Resolves once connected (a command right after start, or during a reconnect waits for the
 * session's `connected` report); rejects when the session failed for good, at `deadline`, or with
 * the signal's reason when it aborts first.
 */
function connected({ action, session, reports$ }: Link, deadline: number, signal: AbortSignal): Promise<unknown> {
  signal.throwIfAborted();
  if (session.connected) return Promise.resolve();
  const failed = () => new MqttCommandError(`mqtt ${action}: ${reports$.value?.reason ?? 'the connection failed'}`);
  const notConnected = () =>
    new MqttCommandError(`mqtt ${action}: not connected to ${session.label}${reports$.value?.reason ? ` (${reports$.value.reason})` : ''}`);
  const settled = reports$.pipe(
    filter((r) => session.connected || r?.state === 'failed' || r?.state === 'stopped'),
    map((r) => {
      if (!session.connected) throw r?.state === 'failed' ? failed() : notConnected();
      return true;
    }),
  );
  const aborted = fromEvent(signal, 'abort').pipe(mergeMap(() => throwError(() => signal.reason)));
  return firstValueFrom(merge(settled, aborted).pipe(timeout({ first: Math.max(0, deadline - Date.now()), with: () => throwError(notConnected) })));
}

/** Publishes one command once connected; done when the broker acknowledged it within `ack_timeout_seconds`, aborted with a stop sent. */
async function publishCommand(link: Link, value: unknown, signal: AbortSignal): Promise<void> {
  const { action, o, session, sendStop } = link;
  const deadline = Date.now() + o.ack_timeout_seconds * 1000;
  await connected(link, deadline, signal);
  const id = randomUUID();
  const payload = JSON.stringify({ action, value, id, at: Date.now() });
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  try {
    await Promise.race([
      session.publish(o.topic, payload, { qos: o.qos, retain: o.retain }).catch((err: unknown) => {
        throw new MqttCommandError(`mqtt ${action}: ${(err as Error).message}`);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new MqttCommandError(`mqtt ${action}: no acknowledgement from ${session.label} within ${o.ack_timeout_seconds} s`)),
          Math.max(0, deadline - Date.now()),
        );
        onAbort = () => {
          if (sendStop && session.connected)
            void session.publish(o.topic, JSON.stringify({ action, stop: true, id, at: Date.now() }), { qos: o.qos }).catch(() => undefined);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/** Publishes the safety governor's stop without waiting for the broker; logs when it cannot go out. */
function publishHalt({ action, o, session }: Link, logger: Logger): void {
  if (!session.connected) {
    logger.error(`mqtt ${action}: cannot send the stop: not connected to ${session.label}; the device's own watchdog must stop it`);
    return;
  }
  void session.publish(o.topic, JSON.stringify({ action, stop: true, at: Date.now() }), { qos: o.qos }).catch((err: unknown) => {
    logger.error(`mqtt ${action}: the stop was not delivered: ${(err as Error).message}`);
  });
}
