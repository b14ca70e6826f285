// Asks a local model server how large its context window is: Ollama's /api/show, llama-server's /props, vLLM's /v1/models.
import { z } from 'zod';

/** Ollama runs a model with this window unless `num_ctx` says otherwise (its documented default for API calls). */
export const OLLAMA_DEFAULT_CTX = 4096;

const LlamaProps = z.looseObject({ default_generation_settings: z.looseObject({ n_ctx: z.number().int().positive() }) });
const VllmModels = z.looseObject({ data: z.array(z.looseObject({ id: z.string(), max_model_len: z.number().int().positive().optional() })) });
const OllamaShow = z.looseObject({ parameters: z.string().optional(), model_info: z.record(z.string(), z.unknown()).optional() });

export interface ContextProbe {
  tokens: number;
  /** Which server said so: `llama-server`, `vllm`, `ollama`. */
  server: string;
}

/** The server's root: `base_url` without a trailing `/v1`. */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

async function getJson(url: string, signal: AbortSignal, init?: RequestInit): Promise<unknown> {
  const res = await fetch(url, { ...init, signal });
  if (!res.ok) throw new Error(`${res.status}`);
  return res.json();
}

/**
 * Tries each server's own endpoint in turn (each within `timeoutMs`) and returns the first window one of
 * them reports, or undefined. For Ollama the window is `num_ctx` of the model's parameters when set,
 * else the default above, never more than the model's trained `*.context_length`.
 */
export async function probeContext(baseUrl: string, model: string, timeoutMs = 3000, headers: Record<string, string> = {}): Promise<ContextProbe | undefined> {
  const root = serverRoot(baseUrl);
  const signal = () => AbortSignal.timeout(timeoutMs);
  try {
    const props = LlamaProps.safeParse(await getJson(`${root}/props`, signal(), { headers }));
    if (props.success) return { tokens: props.data.default_generation_settings.n_ctx, server: 'llama-server' };
  } catch {
    // Not llama-server.
  }
  try {
    const models = VllmModels.safeParse(await getJson(`${root}/v1/models`, signal(), { headers }));
    if (models.success) {
      const m = models.data.data.find((x) => x.id === model) ?? models.data.data[0];
      if (m?.max_model_len) return { tokens: m.max_model_len, server: 'vllm' };
    }
  } catch {
    // Not vLLM.
  }
  try {
    const show = OllamaShow.safeParse(
      await getJson(`${root}/api/show`, signal(), {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ model }),
      }),
    );
    if (show.success) {
      const numCtx = /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(show.data.parameters ?? '');
      const trained = Object.entries(show.data.model_info ?? {}).find(([k, v]) => k.endsWith('.context_length') && typeof v === 'number')?.[1] as
        | number
        | undefined;
      const window = numCtx ? Number(numCtx[1]) : OLLAMA_DEFAULT_CTX;
      return { tokens: trained ? Math.min(window, trained) : window, server: 'ollama' };
    }
  } catch {
    // Not Ollama.
  }
  return undefined;
}
