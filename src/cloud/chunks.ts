// Tolerant reading of chat-completion chunks as real endpoints send them: tool-call deltas placed without `index`, reasoning apart, provider errors typed.
import { CloudStreamError } from './errors.js';

/*
 * What "OpenAI-compatible" endpoints actually stream (the corpus in test/fixtures/providers/ shows each):
 * - Gemini's endpoint sends tool calls without `index`, each whole or its arguments split over further
 *   index-less deltas, with `extra_content.google.thought_signature` (sometimes in a delta of its own),
 *   and finishes a tool-call answer with `finish_reason: "stop"`; it has no `id`/`created` on chunks.
 * - vLLM and some proxies number every call `index: 0` and tell calls apart by a new `id`.
 * - LM Studio repeats `name: ""` / `id: ""` on continuation deltas.
 * - DeepSeek, llama-server and vLLM stream thoughts as `reasoning_content`; Ollama, OpenRouter and newer
 *   vLLM as `reasoning`: they are kept apart from `content` (never spoken).
 * - Errors come mid-stream as `{"error": {"message": ...}}` (OpenAI, OpenRouter, llama-server), as
 *   `{"error": "..."}` (this service) or as `{"object": "error", "message": ...}` (vLLM).
 * Placement rule for a tool-call delta, per choice: a known `id` continues that call; a new `id` starts
 * a call (or names a call that so far had only metadata); without an `id`, a provider `index` seen
 * before continues the call it started, a new one starts a call; with neither, a `name` after a call
 * that already has a name and arguments starts the next call, anything else continues the open call.
 */

/** One normalised tool-call fragment: `index` is ours (0, 1, ... in order of first appearance). */
export interface StreamToolDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
  /** Provider metadata to send back with the call (Gemini's `extra_content`). */
  extra_content?: Record<string, unknown>;
}

/** The provider said something went wrong (in the stream, or as a 200 body): its message, verbatim. */
export class ModelProviderError extends CloudStreamError {
  readonly providerMessage: string;
  readonly providerCode: string | number | undefined;
  constructor(endpoint: string, providerMessage: string, code?: string | number) {
    super(endpoint, `the model provider reported an error${code !== undefined ? ` (${code})` : ''}: ${providerMessage}`);
    this.name = 'ModelProviderError';
    this.providerMessage = providerMessage;
    this.providerCode = code;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The provider error a JSON value carries, or undefined: every shape listed above. */
export function providerError(json: unknown): { message: string; code?: string | number } | undefined {
  if (!isObject(json)) return undefined;
  const e = json.error;
  if (typeof e === 'string') return { message: e };
  if (isObject(e)) {
    const message = str(e.message) ?? str(e.error) ?? JSON.stringify(e).slice(0, 300);
    const code = typeof e.code === 'number' || typeof e.code === 'string' ? e.code : typeof e.type === 'string' ? e.type : undefined;
    return code === undefined ? { message } : { message, code };
  }
  if (json.object === 'error' && typeof json.message === 'string') {
    const code = typeof json.code === 'number' || typeof json.code === 'string' ? json.code : undefined;
    return code === undefined ? { message: json.message } : { message: json.message, code };
  }
  return undefined;
}

interface Placed {
  id?: string;
  named: boolean;
  hasArgs: boolean;
}

/** Gives every tool-call delta of one choice a stable index of ours, by the rule above. */
export class ToolCallPlacer {
  private readonly calls: Placed[] = [];
  private readonly byId = new Map<string, number>();
  private readonly byProviderIndex = new Map<number, number>();

  /** Normalises one raw delta; undefined for a delta that carries nothing. */
  place(raw: unknown): StreamToolDelta | undefined {
    if (!isObject(raw)) return undefined;
    const fn = isObject(raw.function) ? raw.function : {};
    const id = str(raw.id);
    const name = str(fn.name);
    const args = typeof fn.arguments === 'string' ? fn.arguments : isObject(fn.arguments) || Array.isArray(fn.arguments) ? JSON.stringify(fn.arguments) : '';
    const extra = isObject(raw.extra_content) ? raw.extra_content : undefined;
    const providerIndex = typeof raw.index === 'number' && Number.isInteger(raw.index) && raw.index >= 0 ? raw.index : undefined;
    if (!id && !name && !args && !extra) return undefined;

    const open = this.calls.length - 1;
    let index: number;
    if (id && this.byId.has(id)) index = this.byId.get(id)!;
    else if (id) {
      const last = this.calls[open];
      index = last && last.id === undefined && !last.named && !last.hasArgs ? open : this.start();
    } else if (providerIndex !== undefined) {
      index = this.byProviderIndex.get(providerIndex) ?? this.start();
    } else if (open < 0) index = this.start();
    else if (name && this.calls[open]!.named && this.calls[open]!.hasArgs) index = this.start();
    else index = open;

    const call = this.calls[index]!;
    if (id && call.id === undefined) {
      call.id = id;
      this.byId.set(id, index);
    }
    if (providerIndex !== undefined) this.byProviderIndex.set(providerIndex, index);
    if (name) call.named = true;
    if (args) call.hasArgs = true;
    return {
      index,
      ...(id ? { id } : {}),
      type: 'function',
      ...(name || args ? { function: { ...(name ? { name } : {}), ...(args ? { arguments: args } : {}) } } : {}),
      ...(extra ? { extra_content: extra } : {}),
    };
  }

  private start(): number {
    this.calls.push({ named: false, hasArgs: false });
    return this.calls.length - 1;
  }

  /** Calls that got arguments but never a name: a stream no reader can make sense of. */
  nameless(): number {
    return this.calls.filter((c) => !c.named && c.hasArgs).length;
  }
}

/** Reads a usage object leniently: the three counts when they are there, else undefined. */
export function lenientUsage(v: unknown): { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined {
  if (!isObject(v)) return undefined;
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? Math.round(x) : undefined);
  const prompt = n(v.prompt_tokens);
  const completion = n(v.completion_tokens);
  if (prompt === undefined || completion === undefined) return undefined;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: n(v.total_tokens) ?? prompt + completion };
}

export { isObject, str };
