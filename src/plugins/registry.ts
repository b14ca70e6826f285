// A typed, explicit table of plugin descriptors by the name a configuration uses: no scanning, no side effects, fixed once built.
import { didYouMean } from './suggest.js';

/** The kinds of plugin a registry holds. */
export type PluginKind = 'input' | 'action' | 'connector' | 'llm' | 'simulator';

export class Registry<D extends { type: string }> {
  readonly kind: PluginKind;
  private readonly entries = new Map<string, D>();

  /** Throws when two entries share a name (a programming error, found by the first test that builds it). */
  constructor(kind: PluginKind, entries: readonly D[] = []) {
    this.kind = kind;
    for (const entry of entries) {
      if (this.entries.has(entry.type)) throw new Error(`duplicate ${kind} plugin type: ${entry.type}`);
      this.entries.set(entry.type, entry);
    }
  }

  get(type: string): D | undefined {
    return this.entries.get(type);
  }

  has(type: string): boolean {
    return this.entries.has(type);
  }

  names(): string[] {
    return [...this.entries.keys()].sort();
  }

  all(): D[] {
    return [...this.entries.values()];
  }

  /** The message `cortexd check` prints for a name this table lacks. */
  unknownMessage(type: string): string {
    const known = this.names();
    return `unknown ${this.kind} type "${type}"; known: ${known.length ? known.join(', ') : '(none registered yet)'}${didYouMean(type, known)}`;
  }
}
