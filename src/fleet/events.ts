// Which bus events go to the fleet's `events` topic, and what of them: what an operator cares about, transcripts only when shared, never secrets.
import type { AgentEvent } from '../cortex/events.js';
import { redactDeep } from '../redact.js';
import { withoutMemories } from '../memory/recall.js';

/**
 * The message for `e` on the events topic, or undefined when it stays on the robot:
 * - always: agent start and stop, mode changes and refusals, errors, failed hooks, failed and
 *   interrupted actions, streams backing off or failed, tool servers connected or failed, model
 *   errors, fleet commands and what became of them;
 * - model answers: model, latency, cost and the names of the tools called; the answer's text and
 *   the tools' arguments only with `share_transcripts`;
 * - only with `share_transcripts`: input text (what was heard or typed) and prompts (without the
 *   memories in them: src/memory/recall.ts, withoutMemories).
 * Ticks, context values, queued/running/done actions and the channel's own link state stay off
 * (the state and metrics topics carry them). Every message passes through redactDeep.
 */
export function operatorEvent(e: AgentEvent, shareTranscripts: boolean): Record<string, unknown> | undefined {
  const pick = (): unknown => {
    switch (e.type) {
      case 'agent.started':
      case 'agent.stopping':
      case 'agent.stopped':
      case 'mode.changed':
      case 'mode.refused':
      case 'error':
      case 'model.error':
      case 'fleet.command':
        return e;
      case 'hook':
        return e.ok ? undefined : e;
      case 'action':
        return e.state === 'failed' || e.state === 'interrupted' ? e : undefined;
      case 'stream':
        return e.state === 'failed' || e.state === 'backingOff' ? e : undefined;
      case 'mcp':
        return e.state === 'connected' || e.state === 'failed' ? e : undefined;
      case 'model.answer': {
        if (shareTranscripts) return e;
        const { text: _text, tool_calls, ...rest } = e;
        return { ...rest, tool_calls: tool_calls.map((c) => ({ name: c.name })) };
      }
      case 'input':
        return shareTranscripts ? e : undefined;
      case 'prompt':
        // What people told the robot about themselves stays on it, even with shared transcripts.
        return shareTranscripts ? { ...e, prompt: withoutMemories(e.prompt) } : undefined;
      default:
        return undefined;
    }
  };
  const chosen = pick();
  return chosen === undefined ? undefined : (redactDeep(chosen) as Record<string, unknown>);
}

/** A token bucket: at most `perSecond` events a second on average, bursts of `burst`; the rest is dropped and counted. */
export class EventBudget {
  private tokens: number;
  private last: number;
  dropped = 0;

  constructor(
    private readonly perSecond = 20,
    private readonly burst = 100,
    now = Date.now(),
  ) {
    this.tokens = burst;
    this.last = now;
  }

  take(now = Date.now()): boolean {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped += 1;
    return false;
  }
}
