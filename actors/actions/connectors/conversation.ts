// The connectors of the conversation action: speak the turn's response like speak does, then publish the conversation's state as context.
import type { ActionConnector, ConnectorFactory } from '../../../src/cortex/action.js';
import { ConversationArgs } from '../../../src/plugins/schemas/actions.js';
import { createConsoleConnector } from './console.js';
import { createLocalTtsConnector, createSpeechlabTtsConnector } from './speech.js';

const INNER: Record<'speechlab_tts' | 'local_tts' | 'console', ConnectorFactory> = {
  speechlab_tts: createSpeechlabTtsConnector,
  local_tts: createLocalTtsConnector,
  console: createConsoleConnector('conversation'),
};

/**
 * A turn is `{response, conversation_state}`: the response is spoken by the speech connector named
 * (its options are this connector's options), then `finished_key` is published true when the state
 * is `finished` (false otherwise) and `state_key` the state, so a `context_aware` rule can leave the
 * conversation's mode once it is over. An interrupted turn publishes nothing.
 */
export function createConversationConnector(kind: keyof typeof INNER): ConnectorFactory {
  return (raw, ctx) => {
    const options = (raw ?? {}) as Record<string, unknown>;
    const finishedKey = typeof options.finished_key === 'string' ? options.finished_key : 'conversation_finished';
    const stateKey = typeof options.state_key === 'string' ? options.state_key : 'conversation_state';
    const { finished_key: _f, state_key: _s, ...speech } = options;
    const inner: ActionConnector = INNER[kind](speech, ctx);
    const sentence = (value: unknown) => ({ sentence: ConversationArgs.parse(value).response });
    return {
      name: kind,
      ...(inner.prepare ? { prepare: (value, signal, job) => inner.prepare!(sentence(value), signal, job) } : {}),
      async run(value, signal, job) {
        const turn = ConversationArgs.parse(value);
        await inner.run({ sentence: turn.response }, signal, job);
        ctx.publishContext?.({ [finishedKey]: turn.conversation_state === 'finished', [stateKey]: turn.conversation_state });
      },
      stop: () => inner.stop(),
    };
  };
}
