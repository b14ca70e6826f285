// The pieces of the terminal view that hold no state of the run: styled text, the repeat limiter, and what the start lines say about a configuration.
import type { AgentConfig } from '../src/config/schema.js';

export const CODES = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 } as const;
export type Style = keyof typeof CODES;

/** A piece of a line: plain text, or text in a style. */
export type Part = string | { style: Style; text: string };

/** Longest piece printed; the rest is cut with a count, so one huge value cannot flood the terminal. */
const MAX_PART = 2000;

/**
 * Control characters of `text` escaped as in JSON (a newline in a transcript stays on its line), cut
 * at MAX_PART. Applied to the words only, before any colour is added: colour codes are the view's own
 * and must reach the terminal as the escape sequences it interprets.
 */
export function escapeText(text: string): string {
  // eslint-disable-next-line no-control-regex
  const escaped = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => JSON.stringify(c).slice(1, -1));
  return escaped.length > MAX_PART ? `${escaped.slice(0, MAX_PART)}... (${escaped.length - MAX_PART} more characters)` : escaped;
}

/** One line of parts: each escaped, then painted when `color` is on. */
export function renderParts(parts: readonly Part[], color: boolean): string {
  return parts
    .map((p) => {
      if (typeof p === 'string') return escapeText(p);
      const text = escapeText(p.text);
      return color ? `\x1b[${CODES[p.style]}m${text}\x1b[0m` : text;
    })
    .join('');
}

/** The shape of a message: numbers replaced, so "1 exchange(s) dropped" and "2 exchange(s) dropped" are the same warning. */
export const shapeOf = (text: string): string =>
  text
    .replace(/\d+(\.\d+)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * Decides which of many identical messages are printed: the first of a kind, then nothing for
 * `windowMs`, then one summary ("repeated N times") when the kind comes back after the window or when
 * `flush()` is called (at stop). Kinds are keys the caller makes (usually `shapeOf` the message).
 */
export class Repeats {
  private readonly seen = new Map<string, { since: number; suppressed: number; first?: number; last: number }>();
  constructor(private readonly windowMs: number) {}

  /** `print`: show this one; `summary`: how many were held back since the last one shown (0: none). */
  offer(key: string, at: number): { print: boolean; summary: number } {
    const s = this.seen.get(key);
    if (!s) {
      this.seen.set(key, { since: at, suppressed: 0, last: at });
      return { print: true, summary: 0 };
    }
    s.last = at;
    if (at - s.since < this.windowMs) {
      s.suppressed += 1;
      s.first ??= at;
      return { print: false, summary: 0 };
    }
    const summary = s.suppressed;
    this.seen.set(key, { since: at, suppressed: 0, last: at });
    return { print: true, summary };
  }

  /**
   * Kinds that stopped: nothing of them for `quietMs`. Each is forgotten (its next message is shown as
   * new) and, when some were held back, returned with how many and when the first and last of them came.
   */
  ended(now: number, quietMs: number): Array<{ key: string; suppressed: number; first: number; last: number }> {
    const out: Array<{ key: string; suppressed: number; first: number; last: number }> = [];
    for (const [key, s] of this.seen) {
      if (now - s.last < quietMs) continue;
      this.seen.delete(key);
      if (s.suppressed > 0) out.push({ key, suppressed: s.suppressed, first: s.first ?? s.last, last: s.last });
    }
    return out;
  }

  /** The kinds with messages held back, how many, and when the first and last of them came; clears them. */
  flush(): Array<{ key: string; suppressed: number; first: number; last: number }> {
    const out = [...this.seen]
      .filter(([, s]) => s.suppressed > 0)
      .map(([key, s]) => ({ key, suppressed: s.suppressed, first: s.first ?? s.last, last: s.last }));
    for (const [key, s] of this.seen) this.seen.set(key, { since: s.since, suppressed: 0, last: s.last });
    return out;
  }
}

/** What the start lines tell about a configuration, worked out before the agent starts. */
export interface StartFacts {
  /** Display names of modes, for the mode lines. */
  displayNames: Record<string, string>;
  /** Modes with a speak action: a model answer or message hook elsewhere is not spoken. */
  speakingModes: string[];
  /** Where spoken audio goes, one phrase per destination (`WAV files in /x/speech`). */
  speech: string[];
  /** A command to hear the newest clip, when speech goes to files. */
  hearHint?: string;
  /** Per mode, the inputs whose microphone is a replayed recording (input type -> the file's name): what they hear is said to be the recording. */
  replayedMicrophones?: Record<string, Record<string, string>>;
  /** The start already said that there is no sound card (speech goes to files): the speaker's fallback is not news. */
  noSoundCard?: boolean;
  /** The default mode, and the mode memory restored instead of it (when it did). */
  defaultMode: string;
  restoredMode?: string;
  /** How to start in the default mode instead (`cortexd run default --fresh`). */
  freshCommand?: string;
  /** The typed-text hint: the current configuration has an input that takes typed lines. */
  typed: boolean;
}

/** The speaker block of a speech connector as the schemas default it (`player` when absent). */
function speakerOf(config: unknown): { binding?: string; dir?: string } {
  const speaker = (config as { speaker?: unknown } | undefined)?.speaker;
  return speaker && typeof speaker === 'object' ? (speaker as { binding?: string; dir?: string }) : { binding: 'player' };
}

/**
 * Where the speak actions of `config` send their audio, and which modes can speak. `sound` is what the
 * machine can do: without a sound card (`sound.card` false) a `player` speaker's speech goes to WAV
 * files in `sound.fallbackDir` from its first sentence, and the start says that, not "the speaker".
 */
export function speechFacts(
  config: Pick<AgentConfig, 'modes'>,
  sound?: { card: boolean; fallbackDir: string },
): Pick<StartFacts, 'speakingModes' | 'speech' | 'hearHint' | 'noSoundCard'> {
  const speakingModes: string[] = [];
  const speech = new Set<string>();
  let fileDir: string | undefined;
  let noSoundCard = false;
  for (const [name, mode] of Object.entries(config.modes)) {
    const speak = mode.agent_actions.find((a) => a.llm_label === 'speak') ?? mode.agent_actions.find((a) => a.name === 'speak');
    if (!speak) continue;
    speakingModes.push(name);
    if (speak.connector === 'console') {
      speech.add('printed here (console connector)');
      continue;
    }
    const speaker = speakerOf(speak.config);
    if (speaker.binding === 'file' && speaker.dir) {
      speech.add(`WAV files in ${speaker.dir}`);
      fileDir ??= speaker.dir;
    } else if (speaker.binding === 'null') speech.add('nowhere (speaker binding "null")');
    else if (sound && !sound.card) {
      noSoundCard = true;
      speech.add(`WAV files in ${sound.fallbackDir} (no sound card here; a WebSim page plays it too)`);
    } else speech.add('the speaker (aplay, paplay or ffplay)');
  }
  const quoted = fileDir && /^[\w./-]+$/.test(fileDir) ? fileDir : fileDir ? `'${fileDir.replace(/'/g, `'\\''`)}'` : undefined;
  return {
    speakingModes,
    speech: [...speech],
    ...(quoted ? { hearHint: `aplay "$(ls -t ${quoted}/*.wav | head -1)"` } : {}),
    ...(noSoundCard ? { noSoundCard } : {}),
  };
}

/** Per mode, the inputs whose microphone replays a recording (binding `replay`), with the recording's file name. */
export function replayFacts(config: Pick<AgentConfig, 'modes'>): Pick<StartFacts, 'replayedMicrophones'> {
  const replayed: Record<string, Record<string, string>> = {};
  for (const [name, mode] of Object.entries(config.modes)) {
    for (const input of mode.agent_inputs) {
      const mic = (input.config as { microphone?: { binding?: unknown; file?: unknown } } | undefined)?.microphone;
      if (mic?.binding !== 'replay') continue;
      const file = typeof mic.file === 'string' ? (mic.file.split('/').pop() ?? mic.file) : 'a recording';
      (replayed[name] ??= {})[input.type] = file;
    }
  }
  return Object.keys(replayed).length ? { replayedMicrophones: replayed } : {};
}
