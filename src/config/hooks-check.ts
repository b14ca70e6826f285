// Action hooks checked as the runtime will run them: the action must be one of the mode's, and the value must be one its arguments accept.
import type { z } from 'zod';
import { describeValue } from './issues.js';
import type { AgentConfig, HookConfig } from './schema.js';
import { didYouMean } from '../plugins/suggest.js';
import { argsFor } from '../plugins/args.js';
import type { PluginDescriptors } from '../plugins/index.js';

export interface HookProblem {
  path: Array<PropertyKey>;
  message: string;
}

type ActionEntry = AgentConfig['modes'][string]['agent_actions'][number];

/** The single field of an action's arguments (`move`: `action`), with its allowed values when it is an enum. */
function soleField(args: z.ZodType): { key: string; options?: readonly unknown[] } | undefined {
  const shape = (args as unknown as { shape?: Record<string, z.ZodType> }).shape;
  const keys = shape ? Object.keys(shape) : [];
  if (keys.length !== 1) return undefined;
  const options = (shape![keys[0]!] as unknown as { options?: readonly unknown[] }).options;
  return { key: keys[0]!, ...(options ? { options } : {}) };
}

/**
 * The value as the action receives it. Same rule as the runtime's coerceValue (actors/actions/action.ts):
 * a string is the sole argument of a one-field action (`value: "sit"` for move); anything else as given.
 */
function asArgs(args: z.ZodType, value: unknown): unknown {
  const field = typeof value === 'string' ? soleField(args) : undefined;
  return field ? { [field.key]: value } : value;
}

/** What is wrong with `value` for an action's arguments, in one line with the valid values when they are few. */
function valueProblem(args: z.ZodType, value: unknown, label: string): string | undefined {
  const parsed = args.safeParse(asArgs(args, value));
  if (parsed.success) return undefined;
  const field = soleField(args);
  if (field?.options) {
    const given = typeof value === 'string' ? value : (value as Record<string, unknown> | undefined)?.[field.key];
    const names = field.options.map(String);
    const hint = typeof given === 'string' ? didYouMean(given, names) : '';
    return `${describeValue(given)} is not a value of ${label}; valid: ${names.map((n) => JSON.stringify(n)).join(', ')}${hint}`;
  }
  const first = parsed.error.issues[0];
  const at = first?.path.length ? `${first.path.join('.')}: ` : '';
  return `not a value ${label} accepts: ${at}${first?.message ?? 'invalid'}`;
}

/** Problems of the action hooks of `hooks`, run in the mode whose actions are `actions`. */
function checkHooks(hooks: HookConfig[], at: Array<PropertyKey>, modeName: string, actions: ActionEntry[], d: PluginDescriptors, out: HookProblem[]): void {
  hooks.forEach((hook, i) => {
    if (hook.handler_type !== 'action') return;
    const cfg = hook.handler_config;
    const field = cfg.action !== undefined ? 'action' : 'action_type';
    const target = cfg.action ?? cfg.action_type ?? '';
    const action = actions.find((a) => a.llm_label === target) ?? actions.find((a) => a.name === target);
    if (!action) {
      const labels = actions.map((a) => a.llm_label);
      out.push({
        path: [...at, i, 'handler_config', field],
        message: `mode ${JSON.stringify(modeName)} has no action ${JSON.stringify(target)}; its actions: ${labels.length ? labels.join(', ') : 'none'}${didYouMean(target, labels)}`,
      });
      return;
    }
    const spec = d.actions.get(action.name);
    if (!spec) return; // the unknown action type is reported at agent_actions
    const value = cfg.value !== undefined ? cfg.value : cfg.action_config;
    const problem = valueProblem(argsFor(spec, action.config), value, action.llm_label);
    if (problem)
      out.push({
        path: [...at, i, 'handler_config', cfg.value !== undefined || cfg.action_config === undefined ? 'value' : 'action_config'],
        message: problem,
      });
  });
}

/**
 * Every action hook of every mode against that mode's actions; global on_startup hooks against the
 * default mode's (they run there). Global on_shutdown hooks run in whichever mode is current, so an
 * action missing from some mode is not an error here.
 */
export function checkActionHooks(config: AgentConfig, d: PluginDescriptors): HookProblem[] {
  const out: HookProblem[] = [];
  for (const [name, mode] of Object.entries(config.modes))
    checkHooks(mode.lifecycle_hooks, ['modes', name, 'lifecycle_hooks'], name, mode.agent_actions, d, out);
  const start = config.modes[config.default_mode];
  if (start) {
    const startup = config.global_lifecycle_hooks.map((h, i) => ({ h, i })).filter(({ h }) => h.hook_type === 'on_startup');
    const sub: HookProblem[] = [];
    checkHooks(
      startup.map(({ h }) => h),
      ['global_lifecycle_hooks'],
      config.default_mode,
      start.agent_actions,
      d,
      sub,
    );
    // Paths were numbered within the on_startup subset: map them back to the list's own indexes.
    for (const p of sub) out.push({ ...p, path: ['global_lifecycle_hooks', startup[p.path[1] as number]!.i, ...p.path.slice(2)] });
  }
  return out;
}
