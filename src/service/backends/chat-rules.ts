// Data of the offline rule-based chat model: how the heard utterance is found in a prompt, and the intent rules, in order.

/**
 * How the model finds what was heard in the last user message, first match wins:
 * 1. a `// START` ... `// END` block (the runtime's input buffers) following a line that names a voice input
 *    (VOICE_WORDS: `voice`, `speech`, `asr`, `heard`, `said`), found by a line scanner (rule-chat.ts);
 * 2. a line `<Voice|Speech|Heard|User said|ASR...>: text` (VOICE_LINE_PATTERN);
 * 3. otherwise the whole message when it is a single short line (at most 200 characters).
 * Nothing found means nothing was heard: the model idles.
 *
 * Every pattern here runs in time linear in its input (the request body may be 1 MiB): no unbounded
 * quantifier is followed by something that can fail after it and make it retry from each position.
 * test/unit/service-rule-chat-linear.test.ts runs each against 1 MiB adversarial inputs.
 */
export const VOICE_WORDS = /voice|speech|asr|heard|said/i;
export const VOICE_LINE_PATTERN = /^[ \t]*(?:voice|speech|heard|user said|you heard|asr)[^:\n]{0,40}:[ \t]*(.+)$/im;
/** A heard utterance longer than this is cut to it (a spoken sentence is far shorter). */
export const MAX_UTTERANCE_CHARS = 1000;

/** A movement intent: what the utterance must match, and the words offered to the tool's enum. */
export interface MoveRule {
  name: string;
  /** Matches the intent anywhere in the utterance. */
  pattern: RegExp;
  /**
   * Also matches the intent: a verb (`verb`, a global pattern) whose last occurrence on a line is not
   * followed on that line by `unlessAfter` ("go" means forward unless "back" comes after it).
   * Checked by scanning, not by a look-ahead, so the cost stays linear.
   */
  verb?: { verb: RegExp; unlessAfter: RegExp };
  /** Candidate values in preference order; the first one the tool's enum accepts (case-insensitive) wins. */
  values: readonly string[];
}

/** Movement intents, checked in order against the lower-cased utterance. */
export const MOVE_RULES: readonly MoveRule[] = [
  { name: 'stop', pattern: /\b(stop|halt|freeze|stay)\b/, values: ['stop', 'stand still', 'idle', 'stand'] },
  { name: 'turn_left', pattern: /\b(turn|go|rotate)\s+left\b|\bleft\b/, values: ['turn left', 'left', 'turn_left'] },
  { name: 'turn_right', pattern: /\b(turn|go|rotate)\s+right\b|\bright\b/, values: ['turn right', 'right', 'turn_right'] },
  {
    name: 'forward',
    pattern: /\b(forward|forwards|ahead|come here|come closer)\b/,
    verb: { verb: /\b(?:move|go|walk)\b/g, unlessAfter: /\bback/ },
    values: ['move forwards', 'move forward', 'walk forward', 'forward', 'walk', 'move_forward'],
  },
  { name: 'back', pattern: /\b(back|backward|backwards|go away|retreat)\b/, values: ['move back', 'walk back', 'back', 'backward', 'move_back'] },
  { name: 'sit', pattern: /\bsit\b/, values: ['sit', 'sit down'] },
  { name: 'stand', pattern: /\bstand( up)?\b/, values: ['stand up', 'stand'] },
  { name: 'dance', pattern: /\bdance\b/, values: ['dance'] },
  { name: 'wave', pattern: /\bwave\b/, values: ['wave', 'shake paw'] },
];

/** Spoken replies: first matching rule wins; `{text}` is replaced by the utterance. */
export const SPEAK_RULES: ReadonlyArray<{ name: string; pattern: RegExp; reply: string; face?: string }> = [
  { name: 'greeting', pattern: /\b(hello|hi|hey|good (morning|afternoon|evening))\b/, reply: 'Hello! Nice to meet you.', face: 'happy' },
  { name: 'name', pattern: /\bwhat('s| is) your name\b|\bwho are you\b/, reply: 'I am a robot running cortexd.' },
  { name: 'how_are_you', pattern: /\bhow are you\b/, reply: 'I am fine, thank you.', face: 'happy' },
  { name: 'thanks', pattern: /\b(thank you|thanks)\b/, reply: 'You are welcome.', face: 'happy' },
  { name: 'goodbye', pattern: /\b(bye|goodbye|see you)\b/, reply: 'Goodbye!', face: 'sad' },
];

/** Reply when speech matched no speak rule and no movement: the utterance is acknowledged. */
export const ECHO_REPLY = 'I heard you say: {text}';
/** Reply spoken along a movement. */
export const MOVE_REPLY = 'Okay, {move}.';
/** Reply when the offered movement tool's enum has no value for the intent. */
export const MOVE_UNSUPPORTED_REPLY = 'Sorry, I cannot {move}.';

/** Tool names treated as speech, movement and facial expression actions (first offered wins). */
export const SPEAK_TOOLS = ['speak', 'say', 'tts'] as const;
export const MOVE_TOOLS = ['move', 'move_robot', 'locomotion', 'motion'] as const;
export const FACE_TOOLS = ['face', 'emotion', 'emote', 'expression'] as const;

/**
 * Explicit tool use: "use|call|run [the] <tool> [tool] [with <args>]" at the end of the utterance
 * calls any offered tool by name; `<args>` (the rest, newlines included) is JSON, or `key=value`
 * pairs, or free text given to the tool's first string parameter. The `s` flag lets `(.+)` take the
 * rest of the input at once, so it never backtracks from each `use ... with`.
 */
export const CALL_TOOL_PATTERN = /\b(?:use|call|run)\s+(?:the\s+)?([A-Za-z0-9_-]+)(?:\s+tool)?(?:\s+with\s+(.+))?$/is;
/** `key=value` or `key="quoted value"` pairs of explicit arguments; a key starts only at a word start. */
export const ARG_PAIR_PATTERN = /(?<![\w-])([A-Za-z_][\w-]*)=("[^"]*"|\S+)/g;
