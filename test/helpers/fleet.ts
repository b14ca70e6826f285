// Shared by the fleet tests: a broker with the shipped ACL and configuration, an operator that records every message, the `cortexd fleet` CLI as a process, agent configurations.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { startMosquitto, type Broker } from '../support/mosquitto.js';
import { makeCommand, type CommandBody, type FleetReply } from '../../src/fleet/protocol.js';
import { MAIN } from './agent-process.js';

const SYSTEMD = join(import.meta.dirname, '..', '..', 'systemd', 'mosquitto');

/** Users of the test broker: robots named by their id, and one operator. */
export const USERS = { r1: 'pw-r1-Qx71mN', r2: 'pw-r2-Kd93pL', operator: 'pw-op-Zm25wT' } as const;

/** mosquitto with the ACL and configuration shipped in systemd/mosquitto/ (paths and ports set by the harness). */
export function fleetBroker(options: { tls?: boolean; extraAcl?: string } = {}): Promise<Broker> {
  return startMosquitto({
    users: { ...USERS },
    acl: readFileSync(join(SYSTEMD, 'cortexd.acl'), 'utf8') + (options.extraAcl ?? ''),
    baseConf: readFileSync(join(SYSTEMD, 'cortexd.conf'), 'utf8'),
    tls: options.tls ?? false,
  });
}

export interface Seen {
  topic: string;
  text: string;
  json: Record<string, unknown> | undefined;
  retain: boolean;
}

/** An operator connected to the broker, recording every message under `filter`. */
export class Watcher {
  readonly seen: Seen[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(readonly client: MqttClient) {
    client.on('message', (topic, payload, packet) => {
      const text = payload.toString();
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      this.seen.push({ topic, text, json, retain: packet.retain });
      for (const w of [...this.waiters]) w();
    });
  }

  static async start(url: string, options: { username?: string; password?: string; caFile?: string; filter?: string } = {}): Promise<Watcher> {
    const client = mqtt.connect(url, {
      protocolVersion: 5,
      reconnectPeriod: 0,
      username: options.username ?? 'operator',
      password: options.password ?? USERS.operator,
      ...(options.caFile ? { ca: readFileSync(options.caFile) } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    const w = new Watcher(client);
    await client.subscribeAsync(options.filter ?? 'cortexd/#', { qos: 1 });
    return w;
  }

  /** The first message (from the start) matching `pred`, or a rejection after `ms` naming `what`. */
  waitFor(pred: (m: Seen) => boolean, ms = 15_000, what = 'a message', from = 0): Promise<Seen> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = this.seen.slice(from).find(pred);
        if (!hit) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(hit);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `timed out waiting for ${what}; last messages: ${this.seen
              .slice(-5)
              .map((m) => `${m.topic} ${m.text.slice(0, 200)}`)
              .join(' | ')}`,
          ),
        );
      }, ms);
      this.waiters.add(check);
      check();
    });
  }

  /** Publishes a command (or any payload) to `robot` at QoS 1 and waits for the broker's acknowledgement. */
  async publishCommand(robot: string, payload: string): Promise<void> {
    await this.client.publishAsync(`cortexd/${robot}/commands`, payload, { qos: 1 });
  }

  /** Sends `body` as a fresh command and waits for its reply. */
  async command(robot: string, body: CommandBody, ttlMs = 30_000): Promise<FleetReply> {
    const cmd = makeCommand(body, ttlMs);
    const from = this.seen.length;
    await this.publishCommand(robot, JSON.stringify(cmd));
    const m = await this.waitFor((s) => s.topic === `cortexd/${robot}/replies` && s.json?.id === cmd.id, 20_000, `the reply to ${cmd.command}`, from);
    return m.json as FleetReply;
  }

  close(): Promise<void> {
    return this.client.endAsync();
  }
}

/** Runs `cortexd fleet ARGS` (built CLI) with the broker's operator credentials in the environment. */
export function fleetCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, 'fleet', ...args], {
      env: { ...process.env, CORTEX_ENV_FILE: '/nonexistent', CORTEX_MQTT_USERNAME: 'operator', CORTEX_MQTT_PASSWORD: USERS.operator, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/**
 * A small agent: modes `idle` (typed text from `socket`, speak to the console) and `sleep` (typed text
 * too), `busy` (no input); keyword `sleep now` idle -> sleep, a context_aware rule idle -> sleep on
 * `dock: "yes"`; the embedded local service answers. `manual` rules, when given, restrict switches.
 */
export function agentConfig(o: { socket: string; fleet: Record<string, unknown>; manualRules?: boolean; hertz?: number }): string {
  const input = `[{ type: "TextInput", config: { source: "socket", path: "${o.socket}", descriptor: "Voice" } }]`;
  const actions = `[{ name: "speak", llm_label: "speak", connector: "console" }]`;
  const hz = o.hertz ?? 5;
  const manual = o.manualRules
    ? `{ from_mode: "idle", to_mode: "busy", transition_type: "manual", priority: 1 }, { from_mode: "busy", to_mode: "idle", transition_type: "manual", priority: 1 },`
    : '';
  return `{
    version: "v1.0.5", name: "fleet-test", default_mode: "idle", allow_manual_switching: true, mode_memory_enabled: false,
    api_key: "", system_governance: "obey", service: { base_url: "embedded" },
    cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
    fleet: ${JSON.stringify(o.fleet)},
    modes: {
      idle: { display_name: "Idle", description: "d", system_prompt_base: "rest", hertz: ${hz}, agent_inputs: ${input}, agent_actions: ${actions} },
      busy: { display_name: "Busy", description: "d", system_prompt_base: "work", hertz: ${hz} },
      sleep: { display_name: "Sleep", description: "d", system_prompt_base: "sleep", hertz: ${hz}, agent_inputs: ${input}, agent_actions: ${actions} },
    },
    transition_rules: [
      ${manual}
      { from_mode: "idle", to_mode: "sleep", transition_type: "input_triggered", trigger_keywords: ["sleep now"], priority: 2 },
      { from_mode: "idle", to_mode: "sleep", transition_type: "context_aware", context_conditions: { dock: "yes" }, priority: 1 },
    ],
  }`;
}
