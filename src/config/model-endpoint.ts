// CORTEX_LLM_BASE_URL: the configuration's CloudLLMs sent to an OpenAI-compatible server (`<base>/chat/completions`) with a key of any shape.

/** The variables of an OpenAI-compatible model endpoint (docs/models.md). */
export const MODEL_ENDPOINT_ENV = {
  /** The server's OpenAI base, e.g. `https://api.example.com/v1` or `http://127.0.0.1:8080/v1`. */
  base: 'CORTEX_LLM_BASE_URL',
  /** Its key; OM_API_KEY when unset (what a user with one key writes), none when neither is set. */
  key: 'CORTEX_LLM_API_KEY',
  /** The model name the server knows; the configuration's `model` when unset. */
  model: 'CORTEX_LLM_MODEL',
} as const;

/** The context window assumed for the endpoint's model (today's hosted models have more; history_length bounds a prompt first). */
export const ENDPOINT_CONTEXT_TOKENS = 32_768;

/** The CloudLLM settings a rewritten model keeps (LocalLLM has the same meaning for each). */
const KEPT = ['agent_name', 'history_length', 'temperature', 'max_tokens', 'timeout_seconds', 'stream', 'skip_idle', 'persist_history'];

export interface ModelEndpoint {
  baseUrl: string;
  /** The key sent as `Authorization: Bearer` (any shape: the server is not the hosted API), when one is set. */
  apiKey?: string;
  /** Which variable the key came from. */
  keyFrom?: string;
  model?: string;
}

export interface EndpointProblem {
  path: string;
  message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The endpoint the environment names, or a problem naming the variable, or undefined when
 * CORTEX_LLM_BASE_URL is unset or empty. The base is an http(s) URL without credentials (the key goes
 * in a header, never a URL that could be logged); a trailing `/chat/completions` the user pasted is
 * taken off, as are trailing slashes.
 */
export function modelEndpoint(env: Record<string, string | undefined>): ModelEndpoint | EndpointProblem | undefined {
  const raw = env[MODEL_ENDPOINT_ENV.base]?.trim();
  if (!raw) return undefined;
  const where = MODEL_ENDPOINT_ENV.base;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { path: where, message: `not a URL: ${JSON.stringify(raw)} (expected the server's OpenAI base, e.g. http://127.0.0.1:8080/v1)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { path: where, message: `scheme ${url.protocol.replace(':', '')} is not allowed (expected http or https, e.g. https://api.example.com/v1)` };
  if (url.username || url.password) return { path: where, message: `must not carry credentials: put the key in ${MODEL_ENDPOINT_ENV.key} or OM_API_KEY` };
  const baseUrl = raw.replace(/\/+$/, '').replace(/\/chat\/completions$/, '');
  const ownKey = env[MODEL_ENDPOINT_ENV.key]?.trim();
  const omKey = env.OM_API_KEY?.trim();
  const model = env[MODEL_ENDPOINT_ENV.model]?.trim();
  return {
    baseUrl,
    ...(ownKey ? { apiKey: ownKey, keyFrom: MODEL_ENDPOINT_ENV.key } : omKey ? { apiKey: omKey, keyFrom: 'OM_API_KEY' } : {}),
    ...(model ? { model } : {}),
  };
}

export const isEndpointProblem = (e: ModelEndpoint | EndpointProblem | undefined): e is EndpointProblem => e !== undefined && 'message' in e;

/**
 * Rewrites every CloudLLM of a configuration (as parsed and substituted: the top-level `cortex_llm`,
 * each mode's, each MultiLLM member) into a LocalLLM at the endpoint: requests go to
 * `<base>/chat/completions` with the key as a bearer token, streamed or not as the configuration says.
 * A LocalLLM keeps the server its file names. Returns one line per rewritten model
 * (`PATH: what -> where`), never the key.
 */
export function applyModelEndpoint(config: Record<string, unknown>, endpoint: ModelEndpoint): string[] {
  const lines: string[] = [];
  const llm = (entry: unknown, path: string) => {
    if (!isObject(entry)) return;
    if (entry.type === 'CloudLLM') {
      const c = isObject(entry.config) ? entry.config : {};
      const model = endpoint.model ?? (typeof c.model === 'string' && c.model ? c.model : 'gen-4o-mini');
      const keep = Object.fromEntries(Object.entries(c).filter(([k]) => KEPT.includes(k)));
      entry.type = 'LocalLLM';
      // The window is set, not asked: the probe's other paths (`/props`, `/models`, `/api/show`) are not what
      // a hosted endpoint expects, and only `<base>/chat/completions` is called.
      entry.config = {
        ...keep,
        base_url: endpoint.baseUrl,
        model,
        context_tokens: ENDPOINT_CONTEXT_TOKENS,
        ...(endpoint.apiKey ? { api_key: endpoint.apiKey } : {}),
      };
      const key = endpoint.keyFrom ? `the key in ${endpoint.keyFrom}` : 'no key';
      lines.push(
        `${path}: CloudLLM ${String(c.provider ?? 'provider_a')}/${String(c.model ?? 'gen-4o-mini')} -> model ${model} at ${endpoint.baseUrl}/chat/completions (${MODEL_ENDPOINT_ENV.base}, ${key})`,
      );
    } else if (entry.type === 'MultiLLM' && isObject(entry.config) && Array.isArray(entry.config.models)) {
      entry.config.models.forEach((m, i) => llm(m, `${path}.config.models[${i}]`));
    }
  };
  if (config.cortex_llm !== undefined) llm(config.cortex_llm, 'cortex_llm');
  if (isObject(config.modes)) for (const [name, m] of Object.entries(config.modes)) if (isObject(m)) llm(m.cortex_llm, `modes.${name}.cortex_llm`);
  return lines;
}
