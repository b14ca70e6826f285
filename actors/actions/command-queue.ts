// The action actor's command queue: a command's checks on arrival, the queue's bound and policy, and each command's reports on the bus.
import type { z } from 'zod';
import type { ActionConfig } from '../../src/config/schema.js';
import type { ActionConnector, CommandJob, CommandMark } from '../../src/cortex/action.js';
import type { ActionHandleDeps } from '../../src/cortex/contracts.js';
import type { ActionState, AgentEvent } from '../../src/cortex/events.js';
import { CortexError, describeError } from '../../src/errors.js';
import { argsFor } from '../../src/plugins/args.js';
import type { ActionDescriptor } from '../../src/plugins/types.js';

/** A command that did not complete: invalid value, connector failure, dropped from the queue or interrupted. */
export class ActionError extends CortexError {
  readonly state: Exclude<ActionState, 'queued' | 'running' | 'done'>;
  constructor(state: ActionError['state'], message: string, options?: { cause?: unknown }) {
    super(`action_${state}`, message, options);
    this.name = 'ActionError';
    this.state = state;
  }

  /** True when the command was cut short because its action stopped (its mode was left or the agent stopped). */
  get actionStopped(): boolean {
    return this.message.endsWith(`: ${ACTION_STOPPED}`);
  }
}

/**
 * Most commands one action keeps waiting (policy `queue`). A newer command past this drops the oldest
 * waiting one (reported `dropped`, counted in `overflowed` on the bus): newest wins, so a flood of
 * answers (typed lines, fleet `say`) never builds an unbounded line of speech, each holding its clip.
 */
export const ACTION_QUEUE_LIMIT = 16;

/** Why a command ends when its action actor stops. */
export const ACTION_STOPPED = 'action stopped';

export interface Command {
  id: number;
  value: unknown;
  origin: 'model' | 'hook';
  /** Called once when the command leaves the actor (run() waits on it). */
  settle?: (err?: ActionError) => void;
  /** Hears the command's moments (synthesis first byte, playback start). */
  mark?: (mark: CommandMark, at: number) => void;
  /** CU the connector reported spent on this command so far; on the command's last event as `cost_cu`. */
  spentCu?: number;
  /** The connector's head start on this command (`prepare`), and what aborts it when the command leaves. */
  prepared?: { result: unknown; abort: AbortController };
}

/** Where a report goes and what it says of the queue: the action's services and entry, its queue now. */
/** What a report needs of an action's services: the bus, the logger and the mode's name. */
export type ReportDeps = Pick<ActionHandleDeps, 'bus' | 'logger' | 'mode'>;

export interface At {
  deps: ReportDeps;
  entry: ActionConfig;
  pending?: readonly number[];
  overflowed?: number;
  commands?: Map<number, Command>;
}

/** What checking a command needs of its action: why it is broken (if it is), its descriptor and its connector. */
export interface Checks {
  broken: string | undefined;
  spec: ActionDescriptor | undefined;
  connector: ActionConnector | undefined;
}

/**
 * Accepts a bare string for an action whose arguments are one string (or enum) field, so hooks can write
 * `value: "hello"` for speak and `value: "sit"` for move; anything else is validated as given.
 */
export function coerceValue(args: z.ZodType, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const shape = (args as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) return value;
  const keys = Object.keys(shape);
  return keys.length === 1 ? { [keys[0]!]: value } : value;
}

/** A zod error as one line: each issue's path and message. */
function issuesText(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`).join('; ');
}

/** What a connector may tell about a command while it prepares or runs it: its moments and the CU it cost. */
export function jobOf(command: Command): CommandJob {
  // Built field by field: spreading optional parts was a visible share of a tick.
  const job: CommandJob = {
    charge: (cu) => {
      if (cu > 0) command.spentCu = (command.spentCu ?? 0) + cu;
    },
  };
  if (command.mark) job.mark = command.mark;
  return job;
}

/**
 * Reports a command's new state on the bus (and in the log when it failed) and settles its run()
 * caller. `queue` is the number of commands waiting after this change (default: the context's).
 */
export function report(ctx: At, command: Command, state: ActionState, error?: string, queue?: number): void {
  const { entry, deps } = ctx;
  // Built field by field in the event's order (three events per command: spreads were a visible share of a tick).
  const event: Extract<AgentEvent, { type: 'action' }> = {
    type: 'action',
    at: Date.now(),
    mode: deps.mode,
    label: entry.llm_label,
    name: entry.name,
    connector: entry.connector,
    state,
    value: command.value,
  };
  if (error !== undefined) event.error = error;
  event.queue = queue ?? ctx.pending?.length ?? 0;
  if (ctx.overflowed) event.overflowed = ctx.overflowed;
  if (state !== 'queued' && state !== 'running' && command.spentCu) event.cost_cu = command.spentCu;
  deps.bus.emit(event);
  if (state === 'failed') deps.logger.warn({ action: entry.llm_label, origin: command.origin }, `${entry.llm_label} failed: ${error ?? ''}`);
  if (state !== 'queued' && state !== 'running') {
    ctx.commands?.delete(command.id);
    command.prepared?.abort.abort(new ActionError('interrupted', `${entry.llm_label}: ${state}`));
  }
  if (state === 'done') command.settle?.();
  else if (state === 'failed' || state === 'dropped' || state === 'interrupted') {
    command.settle?.(new ActionError(state, `${entry.llm_label}: ${error ?? state}`));
  }
}

/** Reports each of the waiting commands `ids` dropped with `error` and settles their callers. */
export function reportDropped(at: At, ids: readonly number[], error: string, queue?: number): void {
  for (const id of ids) {
    const command = at.commands!.get(id);
    if (command) report(at, command, 'dropped', error, queue);
  }
}

/**
 * The command as the connector will get it (its value parsed by the action's arguments, its `prepare`
 * started), or undefined when it failed here (reported `failed` and settled).
 */
export function validated(at: At, checks: Checks, command: Command): Command | undefined {
  if (checks.broken !== undefined || !checks.spec) return report(at, command, 'failed', checks.broken ?? 'no such action'), undefined;
  const args = argsFor(checks.spec, at.entry.config);
  const parsed = args.safeParse(coerceValue(args, command.value));
  if (!parsed.success) return report(at, command, 'failed', `invalid value for ${at.entry.llm_label}: ${issuesText(parsed.error)}`), undefined;
  const accepted: Command = { ...command, value: parsed.data };
  const connector = checks.connector;
  if (connector?.prepare) {
    // Streamed speech: synthesis starts when a sentence is queued, not when its turn comes.
    const abort = new AbortController();
    try {
      accepted.prepared = { result: connector.prepare(parsed.data, abort.signal, jobOf(accepted)), abort };
    } catch (err) {
      return report(at, command, 'failed', describeError(err)), undefined;
    }
  }
  return accepted;
}

/**
 * Puts an accepted command in the queue by the action's policy: `latest` replaces what waits (reported
 * `dropped`), `queue` appends it; past ACTION_QUEUE_LIMIT waiting, the oldest waiting commands make room
 * (newest wins). Reports it `queued` and returns the queue and the overflow count after it.
 */
export function enqueue(
  at: At & { pending: readonly number[]; commands: Map<number, Command> },
  policy: ActionDescriptor['queue'],
  overflowedBefore: number,
  accepted: Command,
): { pending: number[]; overflowed: number } {
  if (policy === 'latest') reportDropped(at, at.pending, 'replaced by a newer command', 0);
  at.commands.set(accepted.id, accepted);
  const pending = policy === 'latest' ? [accepted.id] : [...at.pending, accepted.id];
  const over = pending.length - ACTION_QUEUE_LIMIT;
  const overflowed = overflowedBefore + Math.max(0, over);
  const after = { ...at, overflowed };
  for (const id of over > 0 ? pending.splice(0, over) : []) {
    const c = at.commands.get(id);
    if (c) report(after, c, 'dropped', `queue full (${ACTION_QUEUE_LIMIT} waiting): the oldest command made room for a newer one`, pending.length);
  }
  report(after, accepted, 'queued', undefined, pending.length);
  return { pending, overflowed };
}

/**
 * Runs one command of a connector that ends its commands before returning (`runSync`): reports it
 * `running`, then `done` or `failed`, and settles its caller, all in the step that took it.
 */
export function runNow(ctx: At, connector: ActionConnector, command: Command): void {
  report(ctx, command, 'running');
  try {
    const job = jobOf(command);
    if (command.prepared) job.prepared = command.prepared.result;
    connector.runSync!(command.value, job);
  } catch (err) {
    report(ctx, command, 'failed', describeError(err));
    return;
  }
  report(ctx, command, 'done');
}
