// A typed, explicit registry: plugin type name -> its config schema and factory; no scanning, no side effects.
import type { z } from 'zod';

export type PluginKind = 'input' | 'action' | 'connector' | 'llm' | 'simulator';

/** What `cortexd check` and `cortexd schema` need to know of a plugin. */
export interface PluginInfo {
  /** The name a configuration uses (`type`, `connector`, action `name`). */
  type: string;
  /** One line for `cortexd check` and the JSON Schema. */
  description: string;
  /** Validates the entry's `config` block before anything starts. */
  schema: z.ZodType;
  /** Inputs only: the input accepts typed text (the terminal's and WebSim's text box reach the mode through it). */
  typedText?: boolean;
}

export interface PluginSpec<Factory> extends PluginInfo {
  create: Factory;
}

export class Registry<Factory, Spec extends PluginInfo = PluginSpec<Factory>> {
  readonly kind: PluginKind;
  private readonly specs = new Map<string, Spec>();

  constructor(kind: PluginKind, specs: Spec[] = []) {
    this.kind = kind;
    for (const spec of specs) this.register(spec);
  }

  register(spec: Spec): void {
    if (this.specs.has(spec.type)) throw new Error(`duplicate ${this.kind} plugin type: ${spec.type}`);
    this.specs.set(spec.type, spec);
  }

  get(type: string): Spec | undefined {
    return this.specs.get(type);
  }

  names(): string[] {
    return [...this.specs.keys()].sort();
  }

  all(): Spec[] {
    return [...this.specs.values()];
  }

  /** The message `cortexd check` prints for a name this registry lacks. */
  unknownMessage(type: string): string {
    const known = this.names();
    return `unknown ${this.kind} type "${type}"; known: ${known.length ? known.join(', ') : '(none registered yet)'}`;
  }
}
