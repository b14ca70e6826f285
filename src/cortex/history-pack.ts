// Fits a request into a model's context window: the oldest remembered exchanges leave first, the system message and the new prompt always stay.
import type { ChatMessage } from '../cloud/protocol.js';

/**
 * Tokens a message costs, estimated without the model's tokenizer: one token per 3.5 characters of its
 * text and tool calls, plus 4 for the message's framing (role, separators). Deliberately on the high
 * side for English (about 4 characters a token), so a packed request fits rather than being cut by the
 * server (llama-server and Ollama drop the start of an overlong prompt: the system message).
 */
export function estimateTokens(m: ChatMessage): number {
  const calls = m.role === 'assistant' && m.tool_calls ? JSON.stringify(m.tool_calls).length : 0;
  return Math.ceil(((m.content ?? '').length + calls) / 3.5) + 4;
}

export interface PackResult {
  messages: ChatMessage[];
  /** Messages left out (oldest history first). */
  dropped: number;
  /** Estimated tokens of what is sent. */
  tokens: number;
}

/**
 * Keeps what fits in `budget` tokens: every system message before the conversation, the last user
 * message and everything after it (this tick's prompt and tool rounds) always; of the rest (the
 * remembered conversation), the newest user/assistant pairs that fit, in order. A user message is never
 * kept without the answer after it, nor an answer without its prompt.
 */
export function packMessages(messages: ChatMessage[], budget: number): PackResult {
  const lead = messages.findIndex((m) => m.role !== 'system');
  if (lead < 0) return { messages, dropped: 0, tokens: messages.reduce((n, m) => n + estimateTokens(m), 0) };
  let lastUser = -1;
  for (let i = messages.length - 1; i >= lead; i--) {
    if (messages[i]!.role === 'user') {
      lastUser = i;
      break;
    }
  }
  const tailFrom = lastUser < 0 ? messages.length : lastUser;
  const head = messages.slice(0, lead);
  const tail = messages.slice(tailFrom);
  const middle = messages.slice(lead, tailFrom);
  let used = [...head, ...tail].reduce((n, m) => n + estimateTokens(m), 0);
  // Group the middle into units that go together: a summary (system), or a user message and what follows it.
  const units: ChatMessage[][] = [];
  for (const m of middle) {
    if (m.role === 'user' || m.role === 'system' || units.length === 0) units.push([m]);
    else units.at(-1)!.push(m);
  }
  const kept: ChatMessage[][] = [];
  for (let i = units.length - 1; i >= 0; i--) {
    const cost = units[i]!.reduce((n, m) => n + estimateTokens(m), 0);
    if (used + cost > budget) break;
    used += cost;
    kept.unshift(units[i]!);
  }
  const keptMiddle = kept.flat();
  return { messages: [...head, ...keptMiddle, ...tail], dropped: middle.length - keptMiddle.length, tokens: used };
}
