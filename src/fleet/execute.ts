// Carries out one admitted fleet command through the agent's control surface, with the same rules as a person at the robot; answers ok or why not.
import type { AgentControl } from '../cortex/contracts.js';
import { describeError } from '../errors.js';
import type { FleetCommand } from './protocol.js';
import type { Sender } from './trust.js';

/**
 * What the channel may do to the agent: the AgentControl surface a person at the robot has,
 * including the safety governor's latch (`estop` latches with source `fleet`; `release` is refused
 * with the governor's reason when nothing is latched). Anything thrown is a refusal with its message.
 */
export type FleetControl = Pick<
  AgentControl,
  'configName' | 'config' | 'currentMode' | 'switchMode' | 'pushText' | 'setContext' | 'estop' | 'release' | 'safetyStatus'
>;

/**
 * Checks a pushed configuration and, when valid, replaces the running one; `lines` are the check's
 * problems when not. `sender` says who the command is known to come from: a reload that relaxes
 * safety needs one that is not `anyone`.
 */
export type ReloadHandler = (text: string, origin: string, sender: Sender) => Promise<CommandResult>;

export interface CommandResult {
  ok: boolean;
  reason?: string;
  lines?: string[];
}

/** Longest wait for the mode machine to accept or refuse a switch (hooks of the old and new mode run meanwhile). */
export const SWITCH_TIMEOUT_MS = 30_000;

async function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `cmd` (already parsed and admitted):
 * - `switch`: a manual switch (refused when the configuration forbids it, the mode is unknown or current);
 * - `say`: typed text to the current mode's text input (refused when it has none);
 * - `context`: context values for `context_aware` rules;
 * - `estop`/`release`: the safety governor's latch, as the WebSim button and `cortexd estop` use it;
 * - `reload`: the configuration text through `reload` (checked first; the old one keeps running when invalid).
 */
export async function executeCommand(
  cmd: FleetCommand,
  deps: { control: FleetControl; reload?: ReloadHandler; sender?: Sender; key?: string },
): Promise<CommandResult> {
  const { control } = deps;
  const origin = `fleet command ${cmd.id}${cmd.from ? ` from ${cmd.from}` : ''}${deps.key ? ` (signed by ${deps.key})` : ''}`;
  try {
    switch (cmd.command) {
      case 'switch': {
        const r = await bounded(control.switchMode(cmd.mode, origin), SWITCH_TIMEOUT_MS, `switch to ${cmd.mode}`);
        return r.ok ? { ok: true } : { ok: false, reason: r.reason ?? 'refused' };
      }
      case 'say':
        return control.pushText(cmd.text) ? { ok: true } : { ok: false, reason: `mode ${control.currentMode()} has no input that takes typed text` };
      case 'context':
        if (!control.setContext) return { ok: false, reason: 'context values cannot be set on this agent' };
        control.setContext(cmd.values, 'fleet');
        return { ok: true };
      case 'estop':
        control.estop(cmd.reason ?? origin, 'fleet');
        return { ok: true };
      case 'release': {
        const r = await control.release('fleet');
        return r.ok ? { ok: true } : { ok: false, reason: r.reason ?? 'refused' };
      }
      case 'reload':
        if (!deps.reload) return { ok: false, reason: 'reload is only available to an agent run by `cortexd run`' };
        return await deps.reload(cmd.config, origin, deps.sender ?? 'anyone');
    }
  } catch (err) {
    return { ok: false, reason: describeError(err) };
  }
}
