// Opens the agent's knowledge base and memory (src/memory/recall.ts), feeds it what the robot says, and closes both at stop
// A failure leaves the agent without them; it never stops the agent.
import type { Logger } from 'pino';
import type { AgentBus } from '../../src/cortex/events.js';
import { describeError } from '../../src/errors.js';
import { Recall, type RecallOptions } from '../../src/memory/recall.js';

/** The agent's Recall and the subscription that tells it what was said. */
export interface OpenRecall {
  recall: Recall;
  close(): Promise<void>;
}

/** The sentences of an answer: its speak calls' `sentence`, else its text. */
function spoken(e: { text?: string; tool_calls: Array<{ name: string; arguments: unknown }> }): string {
  const sentences = e.tool_calls
    .filter((c) => c.name === 'speak')
    .map((c) => (c.arguments as { sentence?: unknown } | undefined)?.sentence)
    .filter((s): s is string => typeof s === 'string');
  return sentences.length ? sentences.join(' ') : (e.text ?? '');
}

/**
 * A Recall for `options.loaded` when its configuration has a knowledge base or memory: the index is
 * brought up to date now (changed files only), the robot's answers go to the conversation's transcript.
 * Undefined when the configuration has neither, or when they cannot be opened (logged).
 */
export function openRecall(options: RecallOptions & { logger: Logger }, bus: AgentBus): OpenRecall | undefined {
  let recall: Recall | undefined;
  try {
    recall = Recall.of(options);
    recall?.start();
  } catch (err) {
    options.logger.warn(`knowledge base and memory not available: ${describeError(err)}`);
    return undefined;
  }
  if (!recall) return undefined;
  const r = recall;
  const sub = bus.events$.subscribe((e) => {
    if (e.type === 'model.answer') r.said(spoken(e));
  });
  return {
    recall: r,
    close: async () => {
      sub.unsubscribe();
      try {
        await r.close();
      } catch (err) {
        options.logger.warn(`closing knowledge base and memory: ${describeError(err)}`);
      }
    },
  };
}
