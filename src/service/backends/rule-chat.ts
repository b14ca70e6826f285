// The offline rule-based chat model: a deterministic simulator (not intelligence) that answers the heard utterance with tool calls for offered actions.
import type { ChatCompletionRequest, ToolCall, ToolDefinition } from '../../cloud/protocol.js';
import {
  ARG_PAIR_PATTERN,
  CALL_TOOL_PATTERN,
  ECHO_REPLY,
  FACE_TOOLS,
  MOVE_REPLY,
  MOVE_UNSUPPORTED_REPLY,
  MAX_UTTERANCE_CHARS,
  MOVE_RULES,
  MOVE_TOOLS,
  SPEAK_RULES,
  SPEAK_TOOLS,
  VOICE_LINE_PATTERN,
  VOICE_WORDS,
  type MoveRule,
} from './chat-rules.js';

export interface RuleAnswer {
  content: string | null;
  toolCalls: ToolCall[];
  /** Names of the rules that fired, for logs and tests. */
  rules: string[];
}

interface JsonSchemaProp {
  type?: string | string[];
  enum?: unknown[];
}

/** The text of the last user message (empty when there is none). */
export function lastUserText(req: Pick<ChatCompletionRequest, 'messages'>): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role === 'user') return m.content;
  }
  return '';
}

/**
 * The text of the first `// START` .. `// END` block that follows (blank lines allowed between) a line
 * naming a voice input. One pass over the lines, with the next END line precomputed, so a message of
 * many voice lines and no END costs no more than one read.
 */
export function voiceBlock(text: string): string | undefined {
  const lines = text.split('\n');
  const nextEnd = new Array<number>(lines.length + 1);
  nextEnd[lines.length] = -1;
  for (let i = lines.length - 1; i >= 0; i--) nextEnd[i] = lines[i]!.trimStart().startsWith('// END') ? i : nextEnd[i + 1]!;
  let nextNonBlank = -1;
  const nonBlankAfter = new Array<number>(lines.length);
  for (let i = lines.length - 1; i >= 0; i--) {
    nonBlankAfter[i] = nextNonBlank;
    if (lines[i]!.trim() !== '') nextNonBlank = i;
  }
  for (let i = 0; i < lines.length; i++) {
    if (!VOICE_WORDS.test(lines[i]!)) continue;
    const start = nonBlankAfter[i]!;
    if (start < 0 || lines[start]!.trim() !== '// START') continue;
    const end = nextEnd[start + 1] ?? -1;
    if (end < 0) continue;
    return lines.slice(start + 1, end).join('\n');
  }
  return undefined;
}

/** What was heard (see chat-rules.ts), cut to MAX_UTTERANCE_CHARS; undefined when nothing was heard. */
export function heardUtterance(text: string): string | undefined {
  const found = voiceBlock(text)?.trim() || VOICE_LINE_PATTERN.exec(text)?.[1]?.trim() || singleLine(text);
  return found ? found.slice(0, MAX_UTTERANCE_CHARS) : undefined;
}

/** The rule-based model's summary: the first three non-empty lines of the text, joined, at most 400 characters. */
export function extractiveSummary(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 3);
  const joined = lines.join(' ');
  return joined.length > 400 ? `${joined.slice(0, 399)}…` : joined;
}

function singleLine(text: string): string | undefined {
  const t = text.trim();
  return t && !t.includes('\n') && t.length <= 200 ? t : undefined;
}

/** Whether a movement rule matches the lower-cased utterance (linear: see MoveRule.verb). */
export function moveMatches(rule: MoveRule, lower: string): boolean {
  if (rule.pattern.test(lower)) return true;
  if (!rule.verb) return false;
  for (const line of lower.split('\n')) {
    // The last verb of a line decides: a later "back" cancels every earlier verb of that line too.
    let after = -1;
    for (const m of line.matchAll(rule.verb.verb)) after = m.index + m[0].length;
    if (after >= 0 && !rule.verb.unlessAfter.test(line.slice(after))) return true;
  }
  return false;
}

function props(tool: ToolDefinition): Array<[string, JsonSchemaProp]> {
  const p = (tool.function.parameters?.properties ?? {}) as Record<string, JsonSchemaProp>;
  return Object.entries(p);
}

function isString(p: JsonSchemaProp): boolean {
  return p.type === 'string' || (Array.isArray(p.type) && p.type.includes('string')) || (p.type === undefined && !p.enum);
}

/** Arguments for a tool that takes one text: the first string property without an enum gets `text`. */
function textArgs(tool: ToolDefinition, text: string): Record<string, unknown> {
  const entry = props(tool).find(([, p]) => !p.enum && isString(p));
  return { [entry?.[0] ?? 'text']: text };
}

/** Arguments choosing among `values`: the first enum property accepting one of them, else the first string property. */
function choiceArgs(tool: ToolDefinition, values: readonly string[]): Record<string, unknown> | undefined {
  for (const [name, p] of props(tool)) {
    if (!p.enum) continue;
    const options = p.enum.filter((v): v is string => typeof v === 'string');
    for (const v of values) {
      const hit = options.find((o) => o.toLowerCase() === v.toLowerCase());
      if (hit) return { [name]: hit };
    }
    return undefined;
  }
  return textArgs(tool, values[0] ?? '');
}

/** Parses `with ...` arguments: JSON object, key=value pairs, or free text for the first string property. */
function explicitArgs(tool: ToolDefinition, raw: string | undefined): Record<string, unknown> {
  if (!raw) return {};
  const s = raw.trim();
  try {
    const v = JSON.parse(s) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  const pairs = [...s.matchAll(ARG_PAIR_PATTERN)];
  if (pairs.length > 0) {
    const out: Record<string, unknown> = {};
    for (const [, k, v] of pairs) {
      const val = v!.startsWith('"') ? v!.slice(1, -1) : v!;
      out[k!] = /^-?\d+(\.\d+)?$/.test(val) ? Number(val) : val;
    }
    return out;
  }
  return textArgs(tool, s);
}

function offered(tools: readonly ToolDefinition[], names: readonly string[]): ToolDefinition | undefined {
  for (const n of names) {
    const t = tools.find((x) => x.function.name.toLowerCase() === n);
    if (t) return t;
  }
  return undefined;
}

/**
 * Answers a chat request deterministically. With tools offered (and tool_choice not `none`):
 * an explicit "use <tool> with ..." calls that tool; a movement intent calls the movement tool (and
 * speaks an acknowledgement); speech gets a `speak` reply from SPEAK_RULES or an echo, plus a face
 * when a rule names one; nothing heard means no tool calls (idle). Without tools the reply is text.
 */
/** Spoken before tool results: "Here is what I found: Echo: hello". */
export const TOOL_RESULT_REPLY = 'Here is what I found: ';

/** The contents of the `tool` messages that end the conversation (results of the last tool calls), cut to 300 characters each. */
function trailingToolResults(messages: ChatCompletionRequest['messages']): string[] {
  const out: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role: string; content?: unknown };
    if (m.role !== 'tool') break;
    const text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
    out.unshift(text.length > 300 ? `${text.slice(0, 297)}...` : text);
  }
  return out;
}

/** The answer to "what is your name" when the system prompt names the robot. */
export const NAME_REPLY = 'My name is {name}.';

/**
 * The robot's name as its system prompt gives it (`Your name is Pip.`, OM1's idiom too), or undefined.
 * The first system message that says so wins; the name is one word (letters, digits, `_`, `-`) of at most 40 characters.
 */
export function nameInPrompt(messages: ChatCompletionRequest['messages']): string | undefined {
  for (const m of messages as Array<{ role: string; content?: unknown }>) {
    if (m.role !== 'system' || typeof m.content !== 'string') continue;
    const hit = /\byour name is ([\p{L}\p{N}][\p{L}\p{N}_-]{0,39})/iu.exec(m.content);
    if (hit) return hit[1];
  }
  return undefined;
}

export function ruleAnswer(req: Pick<ChatCompletionRequest, 'messages' | 'tools' | 'tool_choice'>): RuleAnswer {
  const tools = req.tool_choice === 'none' ? [] : (req.tools ?? []);
  // After tool results the request is answered, not repeated: the results are spoken (or returned as text).
  const results = trailingToolResults(req.messages);
  if (results.length > 0) {
    const said = `${TOOL_RESULT_REPLY}${results.join('; ')}`;
    const speakTool = offered(tools, SPEAK_TOOLS);
    if (!speakTool) return { content: said, toolCalls: [], rules: ['tool_result'] };
    const call: ToolCall = {
      id: 'call_0_result',
      type: 'function',
      function: { name: speakTool.function.name, arguments: JSON.stringify(textArgs(speakTool, said)) },
    };
    return { content: null, toolCalls: [call], rules: ['tool_result'] };
  }
  // A request to summarise (a conversation for the robot's memory, an old history) gets its first lines back.
  const system = req.messages.find((m) => m.role === 'system')?.content;
  if (tools.length === 0 && typeof system === 'string' && /^Summari[sz]e\b/.test(system))
    return { content: extractiveSummary(lastUserText(req)), toolCalls: [], rules: ['summary'] };
  const heard = heardUtterance(lastUserText(req));
  const calls: Array<{ tool: ToolDefinition; args: Record<string, unknown> }> = [];
  const rules: string[] = [];
  if (!heard) return { content: tools.length ? null : '', toolCalls: [], rules: ['idle'] };
  const lower = heard.toLowerCase();

  const explicit = CALL_TOOL_PATTERN.exec(heard);
  const explicitTool = explicit ? tools.find((t) => t.function.name === explicit[1]) : undefined;
  if (explicit && explicitTool) {
    rules.push('call_tool');
    calls.push({ tool: explicitTool, args: explicitArgs(explicitTool, explicit[2]) });
  }

  let spoken: string | undefined;
  let face: string | undefined;
  const moveTool = offered(tools, MOVE_TOOLS);
  const move = calls.length === 0 ? MOVE_RULES.find((r) => moveMatches(r, lower)) : undefined;
  if (move && (moveTool || tools.length === 0)) {
    const args = moveTool ? choiceArgs(moveTool, move.values) : undefined;
    const what = move.values[0] ?? move.name;
    if (moveTool && !args) {
      rules.push(`move:${move.name}:unsupported`);
      spoken = MOVE_UNSUPPORTED_REPLY.replace('{move}', what);
    } else {
      if (moveTool && args) calls.push({ tool: moveTool, args });
      rules.push(`move:${move.name}`);
      spoken = MOVE_REPLY.replace('{move}', what);
    }
  }
  if (calls.length === 0 && !spoken) {
    const r = SPEAK_RULES.find((x) => x.pattern.test(lower));
    rules.push(r ? `speak:${r.name}` : 'speak:echo');
    const named = r?.name === 'name' ? nameInPrompt(req.messages) : undefined;
    spoken = named ? NAME_REPLY.replace('{name}', named) : r ? r.reply : ECHO_REPLY.replace('{text}', heard);
    face = r?.face;
  }

  const speakTool = offered(tools, SPEAK_TOOLS);
  if (spoken && speakTool) calls.push({ tool: speakTool, args: textArgs(speakTool, spoken) });
  const faceTool = face ? offered(tools, FACE_TOOLS) : undefined;
  if (face && faceTool) {
    const args = choiceArgs(faceTool, [face]);
    if (args) calls.push({ tool: faceTool, args });
  }

  if (tools.length === 0) return { content: spoken ?? '', toolCalls: [], rules };
  const toolCalls: ToolCall[] = calls.map((c, i) => ({
    id: `call_${i}_${c.tool.function.name}`,
    type: 'function',
    function: { name: c.tool.function.name, arguments: JSON.stringify(c.args) },
  }));
  return { content: toolCalls.length ? null : (spoken ?? ''), toolCalls, rules };
}
