// Descriptor of the conversation action: speaks each turn and publishes whether the conversation is over (its connectors speak as speak's do).
import { connector, speakerNeeds } from './define.js';
import { Registry } from './registry.js';
import { ActionOptions, ConversationArgs, ConversationConsoleOptions, ConversationLocalOptions, ConversationSpeechlabOptions } from './schemas/actions.js';
import type { ActionDescriptor } from './types.js';

export const conversationAction: ActionDescriptor = {
  type: 'conversation',
  description: 'answer the person in a conversation and say whether it is over (the state becomes a context value)',
  schema: ActionOptions,
  args: ConversationArgs,
  queue: 'queue',
  connectors: new Registry('connector', [
    connector({
      type: 'speechlab_tts',
      description: 'speaks each turn through the hosted speechlab TTS, then publishes the conversation state',
      schema: ConversationSpeechlabOptions,
      needs: (c) => [{ kind: 'service', address: 'base_url' }, ...speakerNeeds(c.speaker)],
    }),
    connector({
      type: 'local_tts',
      description: 'speaks each turn with espeak-ng on this machine, then publishes the conversation state',
      schema: ConversationLocalOptions,
      needs: (c) => speakerNeeds(c.speaker),
    }),
    connector({ type: 'console', description: 'prints each turn, then publishes the conversation state', schema: ConversationConsoleOptions }),
  ]),
};
