// Orders the actions of one model answer as the mode's action_execution_mode says: concurrent, sequential or by dependencies.
import type { ActionHandle } from '../../src/cortex/contracts.js';
import type { AgentBus } from '../../src/cortex/events.js';
import { ActionError } from './command-queue.js';

export type ExecutionMode = 'concurrent' | 'sequential' | 'dependencies';

/**
 * The running end of a mode's sequence (one per run of the mode). OM1's tick awaits a sequential
 * answer before it asks the model again; here the loop does not wait for actions, so the next
 * answer's sequence starts where the previous one ends instead (never beside it).
 */
export class ActionSequence {
  tail: Promise<void> = Promise.resolve();
}

export interface OrderOptions {
  mode: ExecutionMode;
  /** `dependencies`: llm_label -> the labels it waits for (when they are in the same answer). */
  dependencies?: Readonly<Record<string, readonly string[]>>;
  /** The mode run's sequence (sequential). Default: a new one (this answer only). */
  sequence?: ActionSequence;
  /** Aborted when the mode stops running: a command still waiting for its turn is dropped. */
  lifetime: AbortSignal;
  bus: AgentBus;
  modeName: string;
}

/**
 * The order of one answer, OM1's semantics (src/actions/orchestrator.py):
 * - `concurrent`: every command goes to its action at once (each action's queue keeps its own order).
 * - `sequential`: a command starts when the one handed out before it has ended (done or failed: a
 *   failure is reported by its action and the next one still runs).
 * - `dependencies`: a command waits for every command of the labels it depends on that this answer
 *   hands out (before or after it); a label the answer never hands out is not waited for. A command
 *   whose dependency failed or was dropped is dropped (OM1 would wait forever).
 * The handles it gives wrap the mode's: motion still goes through the action actor and its safety
 * governor; only the moment a command is given to its action changes.
 */
export class AnswerOrder {
  private readonly wrapped = new Map<ActionHandle, ActionHandle>();
  private readonly sequence: ActionSequence;
  /** Per label: the outcome (true = done) of each command this answer handed out. */
  private readonly handed = new Map<string, Array<Promise<boolean>>>();
  /** Per label: who waits for its first command (or for the answer to close). */
  private readonly waiters = new Map<string, Array<() => void>>();
  private closed = false;
  private readonly onAbort = () => this.close();

  constructor(private readonly options: OrderOptions) {
    this.sequence = options.sequence ?? new ActionSequence();
  }

  /** The mode's handles as this answer hands commands to them (the same objects when concurrent). */
  wrap(handles: readonly ActionHandle[]): readonly ActionHandle[] {
    if (this.options.mode === 'concurrent') return handles;
    if (!this.wrapped.size && !this.closed) this.options.lifetime.addEventListener('abort', this.onAbort, { once: true });
    return handles.map((h) => {
      let w = this.wrapped.get(h);
      if (!w) this.wrapped.set(h, (w = this.wrapHandle(h)));
      return w;
    });
  }

  /** The answer is complete: dependencies it did not hand out will not come. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.options.lifetime.removeEventListener('abort', this.onAbort);
    for (const list of this.waiters.values()) for (const wake of list) wake();
    this.waiters.clear();
  }

  private wrapHandle(inner: ActionHandle): ActionHandle {
    const step = (value: unknown, signal: AbortSignal, options: Parameters<ActionHandle['run']>[2]) => this.step(inner, value, signal, options);
    return {
      entry: inner.entry,
      get queueLength() {
        return inner.queueLength;
      },
      busy$: inner.busy$,
      dispatch: (value, origin) => void step(value, this.options.lifetime, { origin }).catch(() => undefined),
      run: (value, signal, options) => step(value, signal, options),
      interrupt: () => inner.interrupt(),
      stop: () => inner.stop(),
    };
  }

  private step(inner: ActionHandle, value: unknown, signal: AbortSignal, options: Parameters<ActionHandle['run']>[2]): Promise<void> {
    const label = inner.entry.llm_label;
    const start = async (blockedBy?: string) => {
      if (blockedBy !== undefined || signal.aborted) {
        const why = blockedBy !== undefined ? `not run: ${blockedBy}` : 'not run: its mode stopped before its turn';
        this.reportDropped(inner, value, why);
        throw new ActionError('dropped', `${label}: ${why}`);
      }
      await inner.run(value, signal, { origin: options?.origin ?? 'model', ...(options?.mark ? { mark: options.mark } : {}) });
    };
    let run: Promise<void>;
    if (this.options.mode === 'sequential') {
      run = this.sequence.tail.then(() => start());
      this.sequence.tail = run.catch(() => undefined);
    } else {
      const needs = this.options.dependencies?.[label] ?? [];
      run = Promise.all(needs.map(async (need) => ((await this.outcomeOf(need)) ? undefined : need))).then((failed) => {
        const dep = failed.find((f) => f !== undefined);
        return start(dep !== undefined ? `its dependency "${dep}" did not finish` : undefined);
      });
    }
    const list = this.handed.get(label) ?? [];
    list.push(
      run.then(
        () => true,
        () => false,
      ),
    );
    this.handed.set(label, list);
    for (const wake of this.waiters.get(label) ?? []) wake();
    this.waiters.delete(label);
    return run;
  }

  /** True when every command of `label` this answer hands out ended done (true at once when it hands out none). */
  private async outcomeOf(label: string): Promise<boolean> {
    if (!this.handed.get(label)?.length && !this.closed) {
      await new Promise<void>((resolve) => this.waiters.set(label, [...(this.waiters.get(label) ?? []), resolve]));
    }
    const list = this.handed.get(label) ?? [];
    // Commands of the label handed out while earlier ones ran are waited for too.
    for (let seen = 0; seen < list.length; seen = list.length) {
      if (!(await Promise.all(list.slice(seen))).every(Boolean)) return false;
    }
    return true;
  }

  private reportDropped(inner: ActionHandle, value: unknown, error: string): void {
    const { entry } = inner;
    this.options.bus.emit({
      type: 'action',
      at: Date.now(),
      mode: this.options.modeName,
      label: entry.llm_label,
      name: entry.name,
      connector: entry.connector,
      state: 'dropped',
      value,
      error,
      queue: inner.queueLength,
    });
  }
}
