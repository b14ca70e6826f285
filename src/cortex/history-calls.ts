// Provider metadata of past tool calls (Gemini's thought signatures), remembered by call id and put back on those calls when they return in a request.
import type { ChatMessage } from '../cloud/protocol.js';
import type { LlmToolCall } from './llm.js';

/**
 * Gemini's OpenAI-compatible endpoint sends `extra_content.google.thought_signature` with each tool call
 * and refuses a follow-up request (tool results) whose assistant `tool_calls` lack it. The runtime
 * rebuilds those assistant messages from what the actions returned, so the plugin keeps each call's
 * metadata by id (the newest `limit` calls) and `restore()` puts it back on any assistant tool call of
 * a request that has none. Calls without an id cannot be matched and are left as they are.
 */
export class CallMetadata {
  private readonly byId = new Map<string, Record<string, unknown>>();

  constructor(private readonly limit = 64) {}

  remember(calls: readonly LlmToolCall[]): void {
    for (const c of calls) {
      if (!c.id || !c.extra) continue;
      this.byId.delete(c.id);
      this.byId.set(c.id, c.extra);
      if (this.byId.size > this.limit) this.byId.delete(this.byId.keys().next().value!);
    }
  }

  get size(): number {
    return this.byId.size;
  }

  /** The messages with each remembered call's metadata back on its assistant tool call (new objects; the input is not changed). */
  restore(messages: ChatMessage[]): ChatMessage[] {
    if (this.byId.size === 0) return messages;
    return messages.map((m) => {
      if (m.role !== 'assistant' || !m.tool_calls?.length) return m;
      if (!m.tool_calls.some((c) => this.byId.has(c.id) && c.extra_content === undefined)) return m;
      return {
        ...m,
        tool_calls: m.tool_calls.map((c) => (this.byId.has(c.id) && c.extra_content === undefined ? { ...c, extra_content: this.byId.get(c.id) } : c)),
      };
    });
  }
}
