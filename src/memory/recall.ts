// What a turn is given from the knowledge base and the memory, and what it leaves in memory: one owner per agent, closed at its stop.
import { readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/schema.js';
import { knowledgeSettings, type MemoryBlock } from '../config/memory.js';
import type { RecalledItem } from '../cortex/events.js';
import { describeError } from '../errors.js';
import { readHeard } from './facts.js';
import { KnowledgeIndex, type Passage } from './knowledge.js';
import { type Memory, MemoryStore, memoryFileOf } from './memories.js';

/** Most characters of one passage in the prompt (a long paragraph is cut with an ellipsis). */
const PASSAGE_CHARS = 700;
/** Most characters of a conversation kept for its summary (the newest). */
const TRANSCRIPT_CHARS = 6000;
/** How long a conversation's summary may take at stop before it is given up. */
export const SUMMARY_AT_STOP_MS = 5000;

export const CONVERSATION_SUMMARY_INSTRUCTION =
  'Summarise this conversation between a robot and a visitor in at most three short sentences for the robot to remember later: ' +
  'who it was (their name if they gave one), what they asked or told, what was promised. Answer with the summary only.';

/** What the prompt of one turn gets, and the items for the `recall` event. */
export interface Recalled {
  block: string | undefined;
  used: RecalledItem[];
  note?: string;
}

/** Summarises a text with the configured model (a mode's model plugin); undefined when none can. */
export type SummariseWith = ((instruction: string, text: string, signal: AbortSignal) => Promise<string>) | undefined;

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The lines of the prompt for these passages and memories. */
export function recallBlock(kbName: string, passages: readonly Passage[], memories: readonly Memory[], person: string | undefined): string | undefined {
  const parts: string[] = [];
  if (person) parts.push(`SPEAKER: the person speaking told you their name: ${person}.`);
  if (passages.length) {
    const lines = passages.map((p, i) => `[${i + 1}] ${p.source}${p.heading ? ` (${p.heading})` : ''}:\n${cut(p.text, PASSAGE_CHARS)}`);
    parts.push(
      `KNOWLEDGE (passages of the "${kbName}" documents that may answer what was said; answer from them when they fit, and do not invent what they do not say):\n${lines.join('\n')}`,
    );
  }
  if (memories.length) {
    const lines = memories.map((m) =>
      m.kind === 'fact'
        ? `- ${m.person || 'someone'} told you: ${m.text}`
        : m.kind === 'place'
          ? `- a place you know: ${m.text}`
          : `- an earlier conversation: ${m.text}`,
    );
    parts.push(`MEMORIES (what you remember from before; use them when they fit):\n${lines.join('\n')}`);
  }
  return parts.length ? parts.join('\n\n') : undefined;
}

/** The first words of the memory lines of a prompt (recallBlock): what `withoutMemories` takes out. */
const MEMORY_SECTION = /(^|\n\n)(?:SPEAKER: [^\n]*|MEMORIES \([^\n]*(?:\n- [^\n]*)*|MEMORY: [^\n]*)(?=\n\n|$)/g;

/** A prompt with what the memory put in it replaced by a mark (for copies that leave the robot, e.g. the fleet's shared transcripts). */
export function withoutMemories(prompt: string): string {
  return prompt.replace(MEMORY_SECTION, '$1(memories kept on the robot)');
}

export interface RecallOptions {
  loaded: Pick<LoadedConfig, 'file' | 'configName' | 'config'>;
  stateDir: string;
  logger: Logger;
  now?: () => number;
}

/**
 * The knowledge base and the memory of one running agent. `remember(heard)` keeps what the speaker
 * told about themselves ("forget what I told you" forgets the speaker's facts instead); `recall(heard)`
 * gives the prompt lines for what was heard (knowledge passages and memories above their min_score,
 * none when nothing fits; what was told just now is not given back); `turn` does both. A conversation ends after `conversation_gap_seconds` without speech (or at
 * stop); its summary is made by the model of the mode it happened in and kept as a memory.
 */
export class Recall {
  readonly knowledge: KnowledgeIndex | undefined;
  readonly memory: MemoryStore | undefined;
  private readonly memoryBlock: MemoryBlock | undefined;
  private readonly logger: Logger;
  private readonly now: () => number;
  private watcher: FSWatcher | undefined;
  private dirty = false;
  private person: string | undefined;
  /** Ids of the facts told in this conversation (forgotten on request when the speaker gave no name). */
  private told: number[] = [];
  private transcript: string[] = [];
  /** Ids of the memories the latest utterance told (not recalled back to the same turn). */
  private toldNow = new Set<number>();
  private summariser: SummariseWith;
  private gapTimer: NodeJS.Timeout | undefined;
  private summaries: Promise<void> = Promise.resolve();
  private placesStamp = '';
  private readonly placesFile: string;

  constructor(options: RecallOptions) {
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    const config = options.loaded.config;
    const kb = knowledgeSettings(config.knowledge_base, options.loaded.file);
    if (kb) {
      this.knowledge = new KnowledgeIndex(kb, options.stateDir);
      if (this.knowledge.recovered) this.logger.warn(`knowledge base: ${this.knowledge.recovered}`);
    }
    if (config.memory?.enabled) {
      this.memoryBlock = config.memory;
      this.memory = new MemoryStore(memoryFileOf(options.stateDir, options.loaded.configName), config.memory.max_memories);
      if (this.memory.recovered) this.logger.warn(`memory: ${this.memory.recovered}`);
    }
    this.placesFile = join(options.stateDir, 'locations.json');
  }

  /** A Recall when the configuration has a knowledge base or memory, else undefined. */
  static of(options: RecallOptions): Recall | undefined {
    const c = options.loaded.config;
    return c.knowledge_base || c.memory?.enabled ? new Recall(options) : undefined;
  }

  /** Indexes the knowledge base (changed files only) and watches its folder for changes. */
  start(): void {
    if (!this.knowledge) return;
    this.sync();
    try {
      this.watcher = watch(this.knowledge.settings.root, { recursive: true }, () => (this.dirty = true));
      this.watcher.on('error', () => (this.dirty = true));
      this.watcher.unref();
    } catch (err) {
      // Without a watch the folder is looked at before each turn (a stat per file).
      this.logger.warn(`knowledge base: ${this.knowledge.settings.root} is not watched (${describeError(err)}); checked at each turn`);
      this.watcher = undefined;
    }
  }

  private sync(): void {
    if (!this.knowledge) return;
    this.dirty = false;
    try {
      const r = this.knowledge.sync();
      for (const s of r.skipped) this.logger.warn(`knowledge base: ${s.source} skipped: ${s.why}`);
      if (r.indexed.length || r.removed.length)
        this.logger.info(
          `knowledge base "${this.knowledge.settings.name}": ${r.indexed.length} indexed, ${r.removed.length} removed, ${r.chunks} passages (${Math.round(r.ms)} ms)`,
        );
    } catch (err) {
      this.logger.warn(`knowledge base not indexed: ${describeError(err)}`);
    }
  }

  private syncPlaces(): void {
    if (!this.memory) return;
    let stamp = '';
    try {
      const st = statSync(this.placesFile);
      stamp = `${st.mtimeMs}:${st.size}`;
    } catch {
      stamp = 'none';
    }
    if (stamp === this.placesStamp) return;
    this.placesStamp = stamp;
    try {
      const data =
        stamp === 'none'
          ? { locations: {} }
          : (JSON.parse(readFileSync(this.placesFile, 'utf8')) as { locations?: Record<string, { lat: number; lon: number }> });
      const texts = Object.entries(data.locations ?? {}).map(([name, p]) => `${name} (latitude ${p.lat.toFixed(6)}, longitude ${p.lon.toFixed(6)})`);
      this.memory.setPlaces(texts);
    } catch (err) {
      this.logger.warn(`memory: places not read from ${this.placesFile}: ${describeError(err)}`);
    }
  }

  /** What the prompt gets for `heard` without remembering anything (a turn prepared on partial speech). */
  peek(heard: string): Recalled {
    return this.retrieve(heard);
  }

  private retrieve(heard: string): Recalled {
    const used: RecalledItem[] = [];
    if (!heard.trim()) return { block: undefined, used };
    if (this.knowledge && (this.dirty || !this.watcher)) this.sync();
    let passages: Passage[] = [];
    let memories: Memory[] = [];
    try {
      passages = this.knowledge?.query(heard) ?? [];
    } catch (err) {
      this.logger.warn(`knowledge base query failed: ${describeError(err)}`);
    }
    try {
      if (this.memory && this.memoryBlock) {
        this.syncPlaces();
        memories = this.memory
          .find(heard, { topK: this.memoryBlock.top_k + this.toldNow.size, minScore: this.memoryBlock.min_score })
          .filter((m) => !this.toldNow.has(m.id))
          .slice(0, this.memoryBlock.top_k);
      }
    } catch (err) {
      this.logger.warn(`memory search failed: ${describeError(err)}`);
    }
    for (const p of passages) used.push({ kind: 'knowledge', source: p.source, score: p.score, text: p.text });
    for (const m of memories)
      used.push({ kind: m.kind, source: `memory:${m.id}`, score: m.score ?? 0, text: m.text, ...(m.person ? { person: m.person } : {}) });
    return { block: recallBlock(this.knowledge?.settings.name ?? '', passages, memories, this.memory ? this.person : undefined), used };
  }

  /**
   * The prompt lines of a turn that heard `heard`, then what it tells the memory. `summarise` is the
   * mode's model, kept for the summary of this conversation when it ends.
   */
  turn(heard: string, summarise?: SummariseWith): Recalled {
    const note = this.remember(heard, summarise);
    return this.recall(heard, note);
  }

  /**
   * What `heard` tells the memory: the speaker's name and facts are kept, "forget what I told you"
   * forgets theirs (the returned note tells the model so). Called for every final, also one that
   * switches the mode, so a name said with "hello" is not lost.
   */
  remember(heard: string, summarise?: SummariseWith): string | undefined {
    this.toldNow = new Set();
    if (!heard.trim() || !this.memory || !this.memoryBlock) return undefined;
    this.summariser = summarise ?? this.summariser;
    const said = readHeard(heard);
    let note: string | undefined;
    if (said.forget) {
      const n = this.person ? this.memory.forgetPerson(this.person) : this.memory.forget(this.told);
      const who = this.person ?? 'this person';
      note = `MEMORY: you have just forgotten ${n} thing${n === 1 ? '' : 's'} ${who} told you, as they asked; tell them so.`;
      this.logger.info(`memory: forgot ${n} memories of ${who} on request`);
      this.told = [];
      this.person = undefined;
    }
    if (said.name) this.person = said.name;
    try {
      const ids = [
        ...(said.name ? [this.memory.add('fact', said.name, `my name is ${said.name}`)] : []),
        ...said.facts.map((f) => this.memory!.add('fact', this.person ?? '', f)),
      ];
      this.told.push(...ids);
      this.toldNow = new Set(ids);
    } catch (err) {
      this.logger.warn(`memory not saved: ${describeError(err)}`);
    }
    this.transcript.push(`Visitor: ${heard.trim()}`);
    this.armGap();
    return note;
  }

  /** The prompt lines of a turn that heard `heard` (what it told just now left out), with `note` first. */
  recall(heard: string, note?: string): Recalled {
    const recalled = this.retrieve(heard);
    if (note) {
      recalled.note = note;
      recalled.block = [note, recalled.block].filter(Boolean).join('\n\n');
    }
    return recalled;
  }

  /** What the robot said in this conversation (for its summary). */
  said(text: string): void {
    if (!this.memory || !text.trim() || this.transcript.length === 0) return;
    this.transcript.push(`Robot: ${text.trim()}`);
  }

  private armGap(): void {
    if (!this.memoryBlock) return;
    clearTimeout(this.gapTimer);
    this.gapTimer = setTimeout(() => void this.endConversation(), this.memoryBlock.conversation_gap_seconds * 1000);
    this.gapTimer.unref();
  }

  /** Ends the conversation: its summary by the model becomes a memory (when it had anything and a model can summarise). */
  endConversation(signal: AbortSignal = AbortSignal.timeout(60_000)): Promise<void> {
    clearTimeout(this.gapTimer);
    const lines = this.transcript;
    const person = this.person ?? '';
    this.transcript = [];
    this.told = [];
    this.person = undefined;
    const summarise = this.summariser;
    if (!this.memory || !this.memoryBlock?.summarize || !summarise || lines.length === 0) return this.summaries;
    let text = lines.join('\n');
    if (text.length > TRANSCRIPT_CHARS) text = text.slice(-TRANSCRIPT_CHARS);
    this.summaries = this.summaries.then(async () => {
      try {
        const summary = (await summarise(CONVERSATION_SUMMARY_INSTRUCTION, text, signal)).trim();
        if (summary && this.memory?.db.open) this.memory.add('summary', person, summary);
      } catch (err) {
        this.logger.warn(`conversation not summarised: ${describeError(err)}`);
      }
    });
    return this.summaries;
  }

  /** Summarises the conversation in progress (within SUMMARY_AT_STOP_MS), stops watching, closes the files. */
  async close(): Promise<void> {
    clearTimeout(this.gapTimer);
    this.watcher?.close();
    await this.endConversation(AbortSignal.timeout(SUMMARY_AT_STOP_MS)).catch(() => {});
    this.knowledge?.close();
    this.memory?.close();
  }
}
