// Chat completions endpoint of the local service: validation in the spec's order, backend call, SSE streaming, metering.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { createParser } from 'eventsource-parser';
import { isProvider, modelSupported, unsupportedModelMessage, type Provider } from '../../cloud/catalog.js';
import { ChatCompletionRequestSchema, type ChatCompletionRequest, type Usage } from '../../cloud/protocol.js';
import { BackendError, createChatBackend, estimatePromptTokens } from '../backends/chat.js';
import { INVALID_JSON, requireApiKey, requireBalance, sendError, type ServiceContext } from '../context.js';
import type { VerifiedKey } from '../keys.js';
import { chatCostMicro, chatPrice, estimateTokens } from '../metering.js';
import { chatBackendFor } from '../options.js';

/** Charges a completion to the key and its account, from the backend's usage (or our estimate). */
function meter(ctx: ServiceContext, key: VerifiedKey, provider: Provider, model: string, usage: Usage): void {
  const price = chatPrice(provider, model);
  ctx.accounts.charge({
    keyId: key.keyId,
    userId: key.userId,
    kind: 'chat',
    item: `${provider}/${model}`,
    quantityIn: usage.prompt_tokens,
    quantityOut: usage.completion_tokens,
    costMicro: chatCostMicro(price, usage.prompt_tokens, usage.completion_tokens),
  });
}

function zodSummary(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`)
    .join('; ');
}

export function registerChatRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.post<{ Params: { provider: string } }>('/api/core/:provider/chat/completions', async (req, reply) => {
    const key = requireApiKey(ctx, req, reply);
    if (!key) return reply;
    const body = req.body as unknown;
    if (body === undefined || body === INVALID_JSON) return sendError(reply, 400, 'Invalid JSON');
    const provider = req.params.provider;
    if (!isProvider(provider)) return sendError(reply, 404, `unsupported model provider: ${provider}`);
    const model = (body as { model?: unknown }).model;
    if (typeof model === 'string' && !modelSupported(provider, model))
      return sendError(reply, 404, unsupportedModelMessage(provider, model));
    const parsed = ChatCompletionRequestSchema.safeParse(body);
    if (!parsed.success) return sendError(reply, 400, `Invalid request: ${zodSummary(parsed.error.issues)}`);
    if (!requireBalance(ctx, key, reply)) return reply;

    const request = parsed.data;
    const backend = createChatBackend(provider, chatBackendFor(provider, ctx.backends));
    const abort = new AbortController();
    const onClosing = (): void => abort.abort();
    ctx.closing.addEventListener('abort', onClosing);
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    try {
      if (request.stream) return await streamCompletion(ctx, reply, key, provider, request, backend, abort.signal);
      const completion = await backend.complete(request, abort.signal);
      const usage = completion.usage ?? {
        prompt_tokens: estimatePromptTokens(request),
        completion_tokens: estimateTokens(completion.choices?.[0]?.message?.content ?? ''),
        total_tokens: 0,
      };
      meter(ctx, key, provider, request.model, usage);
      return reply.send(completion);
    } catch (err) {
      if (err instanceof BackendError) return sendError(reply, err.status, err.message, err.details);
      if (abort.signal.aborted) return reply;
      ctx.logger.error({ err, provider }, 'chat completion failed');
      return sendError(reply, 500, `Chat completion failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      ctx.closing.removeEventListener('abort', onClosing);
    }
  });
}

/**
 * Streams the backend's SSE bytes to the client unchanged as they arrive, while a parser watches them
 * for `usage` (or counts streamed content when no usage comes) to meter once the stream ends.
 * A backend failure before the first byte is an ordinary HTTP error; after it, a
 * `data: {"error": ...}` event ends the stream (no `[DONE]`).
 */
async function streamCompletion(
  ctx: ServiceContext,
  reply: FastifyReply,
  key: VerifiedKey,
  provider: Provider,
  request: ChatCompletionRequest,
  backend: ReturnType<typeof createChatBackend>,
  signal: AbortSignal,
): Promise<FastifyReply> {
  const source = await backend.stream(request, signal);
  let usage: Usage | undefined;
  let streamedText = '';
  const parser = createParser({
    onEvent(ev) {
      if (ev.data === '[DONE]') return;
      try {
        const chunk = JSON.parse(ev.data) as {
          usage?: Usage | null;
          choices?: Array<{ delta?: { content?: string | null; tool_calls?: Array<{ function?: { name?: string; arguments?: string } }> } }>;
        };
        if (chunk.usage) usage = chunk.usage;
        for (const c of chunk.choices ?? []) {
          streamedText += c.delta?.content ?? '';
          for (const t of c.delta?.tool_calls ?? []) streamedText += (t.function?.name ?? '') + (t.function?.arguments ?? '');
        }
      } catch {
        /* not JSON: passed through, not metered */
      }
    },
  });
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const decoder = new TextDecoder();
  try {
    for await (const piece of source) {
      const text = typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
      parser.feed(text);
      if (!raw.write(text)) await new Promise<void>((resolve) => raw.once('drain', resolve));
    }
  } catch (err) {
    if (!signal.aborted) {
      ctx.logger.warn({ err, provider }, 'chat stream failed after start');
      raw.write(`data: ${JSON.stringify({ error: `Stream from ${provider} failed` })}\n\n`);
    }
  } finally {
    const final = usage ?? {
      prompt_tokens: estimatePromptTokens(request),
      completion_tokens: estimateTokens(streamedText),
      total_tokens: 0,
    };
    meter(ctx, key, provider, request.model, final);
    raw.end();
  }
  return reply;
}
