// The arguments and description of one action entry: its action's own, or those its config block declares (`argsOf`, `description`), made once per block.
import type { z } from 'zod';
import type { ActionDescriptor } from './types.js';

/** Each entry block's arguments, by the block and the action's `argsOf` (a tool's JSON Schema is converted once per zod schema). */
const entryArgs = new WeakMap<object, { of: (config: unknown) => z.ZodType; args: z.ZodType }>();

/** The arguments an action entry with this `config` block takes: `argsOf(config)` when the action has it, else `args`. */
export function argsFor(spec: Pick<ActionDescriptor, 'args' | 'argsOf'>, config: unknown): z.ZodType {
  const of = spec.argsOf;
  if (!of) return spec.args;
  if (config === null || typeof config !== 'object') return of(config);
  const known = entryArgs.get(config);
  if (known?.of === of) return known.args;
  const args = of(config);
  entryArgs.set(config, { of, args });
  return args;
}

/** What an entry does, for the prompt and its tool: the block's own `description` first for an action whose entries declare their arguments. */
export function entryDescription(spec: Pick<ActionDescriptor, 'description' | 'argsOf'>, config: unknown): string {
  const own = spec.argsOf ? (config as { description?: unknown } | null | undefined)?.description : undefined;
  return typeof own === 'string' && own.trim() ? `${own.trim()} (${spec.description})` : spec.description;
}
