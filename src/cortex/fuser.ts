// The fuser: turns one tick's input buffers, the mode's prompts and its actions into the chat messages of one model call.
import type { ActionConfig, AgentConfig, ModeConfig } from '../config/schema.js';
import type { ChatMessage } from '../cloud/protocol.js';

/** One input's contribution to a tick: its descriptor (`Voice`, `Vision`...) and its formatted latest buffer. */
export interface FuserInput {
  descriptor: string;
  text: string;
}

/** What an action looks like in the prompt: its label and a one-line description. */
export interface ActionDescription {
  label: string;
  description: string;
}

export interface FusedPrompt {
  /** System message: personality, governance, examples and the actions the model may use. */
  system: string;
  /** User message: the tick's inputs, then the question. */
  user: string;
  messages: ChatMessage[];
}

/** The question that closes every user message. */
export const QUESTION = 'What will you do? Answer with the tools (actions) that fit; do nothing when nothing calls for it.';

/**
 * One input section. The block shape (`INPUT: <descriptor>` then `// START` ... `// END`) is the one
 * the reference runtime uses and the one the local service's rule-based model reads as "heard" when
 * the descriptor names a voice input (voice, speech, asr, heard, said). A plugin that already prefixed
 * its buffer with `<descriptor>: ` (TextInput does) has the prefix removed: the label says it once.
 */
export function inputSection(input: FuserInput): string {
  const prefix = `${input.descriptor}: `;
  const body = input.text.startsWith(prefix) ? input.text.slice(prefix.length) : input.text;
  return `INPUT: ${input.descriptor}\n// START\n${body.trim()}\n// END`;
}

/** Actions listed in the prompt: every action of the mode not marked `exclude_from_prompt`. */
export function promptActions(actions: readonly ActionConfig[], describe: (a: ActionConfig) => string | undefined): ActionDescription[] {
  return actions.filter((a) => !a.exclude_from_prompt).map((a) => ({ label: a.llm_label, description: describe(a) ?? a.name }));
}

const join = (parts: Array<string | undefined>): string =>
  parts
    .map((p) => p?.trim())
    .filter((p): p is string => Boolean(p))
    .join('\n\n');

/**
 * Builds the prompt of one tick: mode `system_prompt_base`, global `system_governance`,
 * `system_prompt_examples` and the available actions as the system message; each input's latest
 * buffer as a block in the user message. Inputs with nothing new are left out; with no input at all
 * the user message says so, which the rule-based model reads as "nothing heard".
 */
export function fuse(
  config: Pick<AgentConfig, 'system_governance' | 'system_prompt_examples' | 'system_prompt_base'>,
  mode: Pick<ModeConfig, 'system_prompt_base'>,
  inputs: readonly FuserInput[],
  actions: readonly ActionDescription[],
): FusedPrompt {
  const actionLines = actions.map((a) => `- ${a.label}: ${a.description}`).join('\n');
  const system = join([
    mode.system_prompt_base || config.system_prompt_base,
    config.system_governance,
    config.system_prompt_examples ? `EXAMPLES:\n${config.system_prompt_examples}` : undefined,
    actionLines ? `AVAILABLE ACTIONS:\n${actionLines}` : undefined,
  ]);
  const sections = inputs.filter((i) => i.text.trim().length > 0).map(inputSection);
  const user = join([sections.length ? `AVAILABLE INPUTS:\n${sections.join('\n')}` : 'AVAILABLE INPUTS:\n(nothing new)', QUESTION]);
  return {
    system,
    user,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
  };
}

/** The prompt as one text (the `prompt` event and `save_interactions`). */
export function promptText(p: FusedPrompt): string {
  return `${p.system}\n\n${p.user}`;
}

/**
 * The line the prompt gets while the safety governor refuses motion (e-stop latched, agent stopping,
 * a mode that forbids motion): the model is told, so it does not keep calling `labels` and can say
 * why it does not move. Undefined when motion is allowed or the mode has no motion action.
 */
export function motionNotice(labels: readonly string[], why: string | undefined): string | undefined {
  if (!why || labels.length === 0) return undefined;
  const names = labels.map((l) => `"${l}"`).join(', ');
  return `SAFETY: motion is disabled (${why}). Calls to ${names} are refused. If someone asks you to move, say that you cannot move right now and why.`;
}
