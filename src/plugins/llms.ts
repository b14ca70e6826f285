// Descriptors of the model plugins (CloudLLM, LocalLLM, MultiLLM): config schema and the services each calls; the code is in src/cortex/llm/.
import { descriptor } from './define.js';
import { Registry } from './registry.js';
import { CloudLlmOptions, LocalLlmOptions, MultiLlmOptions } from './schemas/llms.js';
import type { DeviceNeed, LlmDescriptor } from './types.js';

const cloudNeeds = (): DeviceNeed[] => [{ kind: 'service', address: 'base_url' }];
const localNeeds = (c: { base_url: string }): DeviceNeed[] => [{ kind: 'network', url: c.base_url }];

export const cloudLlm = descriptor({
  type: 'CloudLLM',
  description: 'Hosted chat completions (POST /api/core/{provider}/chat/completions); provider and model checked against the provider prefixes',
  schema: CloudLlmOptions,
  needs: cloudNeeds,
});

export const localLlm = descriptor({
  type: 'LocalLLM',
  description: 'Any OpenAI-compatible chat-completions server (POST {base_url}/chat/completions), e.g. llama.cpp or ollama; api_key optional',
  schema: LocalLlmOptions,
  needs: localNeeds,
});

export const multiLlm = descriptor({
  type: 'MultiLLM',
  description: 'Several CloudLLM/LocalLLM models: strategy first_valid (race, first valid answer wins) or fallback (in order), per-model timeout',
  schema: MultiLlmOptions,
  needs: (c) => c.models.flatMap((m) => (m.type === 'CloudLLM' ? cloudNeeds() : localNeeds(m.config))),
});

/** Model plugins, by `cortex_llm.type`. */
export const llmDescriptors = new Registry<LlmDescriptor>('llm', [cloudLlm, localLlm, multiLlm]);
