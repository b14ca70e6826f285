// The `knowledge_base` and `memory` blocks: a folder of documents the robot answers from, and what it remembers across restarts.
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';

/** Default most passages of the knowledge base per turn. */
export const DEFAULT_TOP_K = 3;
/** Default least share of a question (weighted by how rare its words are) a passage must match: 0..1. */
export const DEFAULT_MIN_SCORE = 0.35;
/** Files larger than this (bytes) are skipped with a warning. */
export const DEFAULT_MAX_FILE_BYTES = 2_000_000;
/** Default most memories kept (facts, places, summaries); the oldest conversation summaries go first. */
export const DEFAULT_MAX_MEMORIES = 2000;

/**
 * `knowledge_base`: OM1's block and field names, also the native ones (`name` and `root` are accepted
 * as short forms). `min_score` is the share of the question a passage must cover, 0..1 (see
 * src/memory/query.ts); `synonyms` are groups of words that mean the same thing to this robot's visitors.
 */
export const KnowledgeBaseBlock = z
  .looseObject({
    knowledge_base_name: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
    /** The folder of documents (Markdown, text); a relative path is relative to the configuration file. */
    knowledge_base_root: z.string().min(1).optional(),
    root: z.string().min(1).optional(),
    /** OM1's hosted knowledge service: its protocol is not public, so this runtime does not call it (reported by check). */
    base_url: z.string().optional(),
    top_k: z.number().int().min(1).max(50).default(DEFAULT_TOP_K),
    min_score: z.number().min(0).max(1).default(DEFAULT_MIN_SCORE),
    synonyms: z.array(z.array(z.string().min(1)).min(2, 'a synonym group needs at least two words')).default([]),
    max_file_bytes: z.number().int().positive().default(DEFAULT_MAX_FILE_BYTES),
  })
  .superRefine((kb, ctx) => {
    if (!kb.knowledge_base_root && !kb.root && !kb.base_url) {
      ctx.addIssue({ code: 'custom', path: ['knowledge_base_root'], message: 'a knowledge base needs knowledge_base_root (the folder of its documents)' });
    }
  });

/** `memory`: OM1's `{enabled}`, with the runtime's bounds. */
export const MemoryBlock = z.looseObject({
  enabled: z.boolean().default(false),
  /** Most memories kept; the oldest summaries, then the oldest facts, are dropped past it. */
  max_memories: z.number().int().min(10).max(100_000).default(DEFAULT_MAX_MEMORIES),
  /** Most memories per turn in the prompt. */
  top_k: z.number().int().min(1).max(20).default(3),
  /** Least share of what was heard a memory must match (as knowledge_base.min_score). */
  min_score: z.number().min(0).max(1).default(0.3),
  /** Summarise each conversation with the configured model when it ends (metered like any call). */
  summarize: z.boolean().default(true),
  /** Seconds without anything heard after which a conversation has ended. */
  conversation_gap_seconds: z.number().positive().max(86_400).default(120),
});

export type KnowledgeBaseBlock = z.infer<typeof KnowledgeBaseBlock>;
export type MemoryBlock = z.infer<typeof MemoryBlock>;

/** A knowledge base as the runtime uses it: an absolute root and the settings. */
export interface KnowledgeSettings {
  name: string;
  root: string;
  topK: number;
  minScore: number;
  synonyms: string[][];
  maxFileBytes: number;
}

/** The settings of a `knowledge_base` block of the configuration `configFile`; undefined when it names no local folder. */
export function knowledgeSettings(block: KnowledgeBaseBlock | undefined, configFile: string): KnowledgeSettings | undefined {
  const root = block?.knowledge_base_root ?? block?.root;
  if (!block || !root) return undefined;
  const abs = isAbsolute(root) ? root : resolve(dirname(configFile), root);
  return {
    name: block.knowledge_base_name ?? block.name ?? (abs.split('/').filter(Boolean).pop() || 'knowledge'),
    root: abs,
    topK: block.top_k,
    minScore: block.min_score,
    synonyms: block.synonyms,
    maxFileBytes: block.max_file_bytes,
  };
}
