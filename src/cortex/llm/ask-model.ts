// One model call as CloudLLM and LocalLLM make it: streamed while the provider's streams can be read, else asked whole, the answer assembled either way.
import type { ChatStreamEvent } from '../../cloud/sse.js';
import type { AnswerObserver, LlmAnswer } from '../llm.js';
import type { ModelHealth } from './model-health.js';
import { assemble } from './stream.js';

export interface AskModelOptions {
  /** Sends the request (streamed or not) and returns its events once the response has begun. */
  events: (stream: boolean) => Promise<AsyncIterable<ChatStreamEvent>>;
  /** The plugin's `stream` setting. */
  stream: boolean;
  health: ModelHealth;
  observer: AnswerObserver | undefined;
  signal: AbortSignal;
  startedAt: number;
  model: string;
  onObserverError?: (err: unknown) => void;
}

/**
 * Streams when the setting says so and the session has not switched streaming off; a stream that
 * cannot be read (see ModelHealth.fallBack) is asked again once, whole. Calls the streamed attempt
 * already handed to the observer keep their index in the whole answer, so the tick does not hand them
 * out twice. A whole answer is read by the same tolerant reader (a JSON error body with status 200 is
 * the provider's error), and is not reported to the observer (the tick hands it out).
 */
export async function askModel(o: AskModelOptions): Promise<LlmAnswer> {
  let sent = false;
  if (o.stream && o.health.streaming) {
    try {
      const events = await o.events(true);
      o.observer?.requestSent?.(o.startedAt);
      sent = true;
      return await assemble(events, o.observer, o.startedAt, o.model, o.onObserverError);
    } catch (err) {
      if (!o.health.fallBack(err, o.signal)) throw err;
    }
  }
  const events = await o.events(false);
  if (!sent) o.observer?.requestSent?.(o.startedAt);
  const { streamed: _streamed, ...answer } = await assemble(events, undefined, o.startedAt, o.model);
  return answer;
}
