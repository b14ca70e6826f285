// An MQTT session (src/mqtt/session.ts) as a session actor: the session machine's input for it, and a runner for owners outside an agent's tree.
import { createActor } from 'xstate';
import type { MqttSession } from '../../src/mqtt/session.js';
import { streamSessionLogic, type SessionInput, type SessionTiming } from './session-machine.js';

/** mqtt.js gives up on a CONNACK after 10 s (its `connectTimeout`); the session machine's own guard is later, so the client's reason wins. */
const CONNECT_TIMEOUT_MS = 15_000;

/**
 * The session machine's input for `session`: its connector, its reconnect policy, and hooks that
 * hand every state to the session (which reports it to its owner: the fleet's `fleet` events, the
 * input's `stream` events). A CONNACK is a healthy connection (`healthyAfterMs: 0`): a connection that
 * dropped is replaced at once (never sooner than `minCycleMs` after it opened), failed attempts wait
 * the backoff. Messages do not pass through the machine: the client hands them to their owner
 * directly (with the fleet's intake pacing), so a flood never becomes actor events. MQTT's keepalive
 * is the protocol's (PINGREQ); the machine's keepalive does nothing.
 */
export function mqttSessionInput(session: MqttSession, timing: Partial<SessionTiming> = {}): SessionInput {
  const p = session.policy;
  const random = session.random;
  return {
    connect: session.connect,
    prefix: 'mqtt',
    ...(random ? { random } : {}),
    timing: {
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      keepaliveMs: 60_000,
      backoffInitialMs: p.backoff.initialMs,
      backoffMaxMs: p.backoff.maxMs,
      healthyAfterMs: 0,
      breakerThreshold: p.breakerThreshold,
      breakerInitialMs: p.breakerInitialMs,
      breakerMaxMs: p.breakerMaxMs,
      minCycleMs: p.minCycleMs,
      ...timing,
    },
    hooks: {
      attach: () => undefined,
      detach: () => undefined,
      keepalive: () => undefined,
      onMessage: () => [],
      isBenignClose: () => false,
      state: (e) => session.engineState(e),
    },
  };
}

/**
 * Runs the engine of `session` as an actor of its own, for an owner that is not in an agent's tree
 * (bench/fleet.js's robots). In an agent, the owner invokes `streamSessionLogic()` with
 * `mqttSessionInput` instead, so the inspector shows the connection. `stop()` ends the session too.
 */
export function runMqttSession(session: MqttSession): { stop(): Promise<void> } {
  const actor = createActor(streamSessionLogic(), { input: mqttSessionInput(session) }).start();
  return {
    stop: async () => {
      const ending = session.stop();
      actor.stop();
      await ending;
    },
  };
}
