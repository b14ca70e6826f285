// Mode memory on disk: the current and previous mode and the last transitions, written atomically per config.
import { readFileSync } from 'node:fs';
import { removeStaleTemps, writeJsonAtomic } from '../atomic-file.js';
import { join } from 'node:path';
import { z } from 'zod';
import { stateDir } from '../paths.js';
import { redact } from '../redact.js';
import { describeError } from '../errors.js';

/** One mode switch, as reported to the agent and kept in mode memory. */
export const TransitionRecord = z.object({
  from: z.string(),
  to: z.string(),
  /** Index of the rule in transition_rules; null for manual switches without a rule and rollbacks. */
  rule_index: z.number().int().nullable(),
  /** input_triggered, time_based, context_aware, manual, or rollback. */
  trigger: z.string(),
  reason: z.string(),
  /** Clock time in ms (epoch ms with the real clock). */
  at: z.number(),
});
export type TransitionRecord = z.infer<typeof TransitionRecord>;

export const ModeMemory = z.object({
  version: z.literal(1),
  config: z.string(),
  current: z.string(),
  previous: z.string().nullable(),
  transitions: z.array(TransitionRecord),
});
export type ModeMemory = z.infer<typeof ModeMemory>;

/** How many transitions mode memory keeps. */
export const MEMORY_TRANSITIONS = 20;

/** `<stateDir>/modes/<config name>.json`; the name is reduced to safe file-name characters. */
export function modeMemoryPath(configName: string, dir: string = stateDir()): string {
  const safe = configName.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || 'agent';
  return join(dir, 'modes', `${safe}.json`);
}

/** Result of reading mode memory: the memory, nothing (no file), or a warning for a file ignored. */
export interface MemoryRead {
  memory?: ModeMemory;
  warning?: string;
}

/** Reads mode memory. A missing file is normal; an unreadable or corrupt one yields a warning and is ignored. */
export function readModeMemory(path: string): MemoryRead {
  removeStaleTemps(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { warning: `mode memory ${path} could not be read and is ignored: ${describeError(err)}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { warning: `mode memory ${path} is corrupt (not JSON: ${describeError(err)}) and is ignored` };
  }
  const parsed = ModeMemory.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { warning: `mode memory ${path} is corrupt (${first?.path.join('.') || 'file'}: ${first?.message}) and is ignored` };
  }
  return { memory: parsed.data };
}

/**
 * Writes mode memory atomically: a temporary file in the same directory is written and fsynced,
 * renamed over the old file, and the directory is fsynced so the rename survives a power cut.
 * Reasons are redacted; the record holds mode names and rule indexes only, never configuration values.
 */
export function writeModeMemory(path: string, memory: ModeMemory): void {
  const clean: ModeMemory = {
    ...memory,
    transitions: memory.transitions.slice(-MEMORY_TRANSITIONS).map((t) => ({ ...t, reason: redact(t.reason) })),
  };
  writeJsonAtomic(path, clean);
}

/** Persistence used by the mode machine; a store that fails to write reports it and keeps running. */
export interface ModeMemoryStore {
  load(): MemoryRead;
  save(memory: ModeMemory): void;
}

/** A store on one file. Writes are synchronous (a few hundred bytes) so no switch is ever lost to ordering. */
export function fileModeMemory(path: string, onError: (message: string) => void): ModeMemoryStore {
  return {
    load: () => readModeMemory(path),
    save(memory) {
      try {
        writeModeMemory(path, memory);
      } catch (err) {
        onError(`mode memory could not be saved to ${path}: ${describeError(err)}`);
      }
    },
  };
}
