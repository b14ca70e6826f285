// Chat completions endpoint of the local service: validation in the spec's order, backend call, SSE streaming, metering.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { createParser } from 'eventsource-parser';
import { isProvider, modelSupported, unsupportedModelMessage, type Provider } from '../../cloud/catalog.js';
import { ChatCompletionRequestSchema, type ChatCompletionRequest, type Usage } from '../../cloud/protocol.js';
import { BackendError, createChatBackend, estimatePromptTokens } from '../backends/chat.js';
import type { Reservation } from '../accounts.js';
import { admit, INVALID_JSON, requireApiKey, sendError, type ServiceContext } from '../context.js';
import type { VerifiedKey } from '../keys.js';
import { chatCostMicro, chatPrice, estimateTokens } from '../metering.js';
import { chatBackendFor } from '../options.js';

/** Decision: the 400 text of a body that is JSON but not an object (`null`, a list, a number). */
export const NOT_AN_OBJECT = 'Invalid request: the body must be a JSON object';
/** Output tokens reserved for the offline rule-based model, whose answers are short. */
const RULES_RESERVE_TOKENS = 512;
/** Token counts above this in an upstream's usage are not believed. */
const MAX_USAGE_TOKENS = 100_000_000;

/**
 * The upstream's usage when it is believable: non-negative safe integers below MAX_USAGE_TOKENS.
 * Anything else (missing, negative, fractional, huge) is replaced by our estimate, so a broken or
 * hostile upstream can neither make a charge negative nor stop the answer from being charged.
 */
export function validUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const { prompt_tokens: p, completion_tokens: c } = u as Record<string, unknown>;
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_USAGE_TOKENS;
  return ok(p) && ok(c) ? { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } : undefined;
}

/** Micro-CU reserved at admission: estimated prompt at the input price plus the output bound at the output price. */
export function reserveMicro(ctx: ServiceContext, provider: Provider, request: ChatCompletionRequest, offline: boolean): number {
  const price = chatPrice(provider, request.model);
  const output = offline ? RULES_RESERVE_TOKENS : (request.max_tokens ?? ctx.limits.chatReserveTokens);
  return chatCostMicro(price, estimatePromptTokens(request), output);
}

/** Settles the reservation with the charge of a completion: the backend's usage when believable, else our estimate. */
function meter(ctx: ServiceContext, r: Reservation, key: VerifiedKey, provider: Provider, model: string, reported: unknown, estimate: () => Usage): void {
  const valid = validUsage(reported);
  if (reported !== undefined && reported !== null && !valid) ctx.logger.warn({ provider, model }, 'upstream usage not believable; charged the estimate');
  const usage = valid ?? estimate();
  ctx.accounts.settle(r, {
    keyId: key.keyId,
    userId: key.userId,
    kind: 'chat',
    item: `${provider}/${model}`,
    quantityIn: usage.prompt_tokens,
    quantityOut: usage.completion_tokens,
    costMicro: chatCostMicro(chatPrice(provider, model), usage.prompt_tokens, usage.completion_tokens),
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
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return sendError(reply, 400, NOT_AN_OBJECT);
    const provider = req.params.provider;
    if (!isProvider(provider)) return sendError(reply, 404, `unsupported model provider: ${provider}`);
    const model = (body as { model?: unknown }).model;
    if (typeof model === 'string' && !modelSupported(provider, model))
      return sendError(reply, 404, unsupportedModelMessage(provider, model));
    const parsed = ChatCompletionRequestSchema.safeParse(body);
    if (!parsed.success) return sendError(reply, 400, `Invalid request: ${zodSummary(parsed.error.issues)}`);
    const request = parsed.data;
    const cfg = chatBackendFor(provider, ctx.backends);
    const reservation = admit(ctx, key, reserveMicro(ctx, provider, request, cfg.kind === 'rules'), reply);
    if (!reservation) return reply;

    const backend = createChatBackend(provider, cfg);
    const abort = new AbortController();
    const onClosing = (): void => abort.abort();
    ctx.closing.addEventListener('abort', onClosing);
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    try {
      if (request.stream) return await streamCompletion(ctx, reply, key, provider, request, backend, abort.signal, reservation);
      const completion = await backend.complete(request, abort.signal);
      meter(ctx, reservation, key, provider, request.model, completion.usage, () => ({
        prompt_tokens: estimatePromptTokens(request),
        completion_tokens: estimateTokens(completion.choices?.[0]?.message?.content ?? ''),
        total_tokens: 0,
      }));
      return reply.send(completion);
    } catch (err) {
      if (err instanceof BackendError) return sendError(reply, err.status, err.message, err.details);
      if (abort.signal.aborted) return reply;
      ctx.logger.error({ err, provider }, 'chat completion failed');
      return sendError(reply, 500, `Chat completion failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      // A request that failed before it was charged is not charged: its reservation is released.
      ctx.accounts.settle(reservation);
      ctx.closing.removeEventListener('abort', onClosing);
    }
  });
}

/**
 * Streams the backend's SSE bytes to the client unchanged as they arrive, while a parser watches them
 * for `usage` (or counts streamed content when no usage comes) to meter once the stream ends.
 * A backend failure before the first byte is an ordinary HTTP error; after it, a
 * `data: {"error": ...}` event ends the stream (no `[DONE]`). The response always ends, and the
 * stream is always charged (upstream usage when believable, else the estimate), in that order of
 * importance: a metering failure is logged and never leaves a client waiting.
 */
async function streamCompletion(
  ctx: ServiceContext,
  reply: FastifyReply,
  key: VerifiedKey,
  provider: Provider,
  request: ChatCompletionRequest,
  backend: ReturnType<typeof createChatBackend>,
  signal: AbortSignal,
  reservation: Reservation,
): Promise<FastifyReply> {
  const source = await backend.stream(request, signal);
  let usage: unknown;
  let streamedChars = 0;
  const parser = createParser({
    onEvent(ev) {
      if (ev.data === '[DONE]') return;
      try {
        const chunk = JSON.parse(ev.data) as {
          usage?: unknown;
          choices?: Array<{ delta?: { content?: string | null; tool_calls?: Array<{ function?: { name?: string; arguments?: string } }> } }>;
        };
        if (chunk.usage) usage = chunk.usage;
        for (const c of Array.isArray(chunk.choices) ? chunk.choices : []) {
          streamedChars += String(c?.delta?.content ?? '').length;
          for (const t of Array.isArray(c?.delta?.tool_calls) ? c.delta.tool_calls : [])
            streamedChars += String(t?.function?.name ?? '').length + String(t?.function?.arguments ?? '').length;
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
    raw.end();
    try {
      meter(ctx, reservation, key, provider, request.model, usage, () => ({
        prompt_tokens: estimatePromptTokens(request),
        completion_tokens: streamedChars === 0 ? 0 : Math.max(1, Math.ceil(streamedChars / 4)),
        total_tokens: 0,
      }));
    } catch (err) {
      ctx.logger.error({ err, provider }, 'charging a streamed completion failed');
    }
  }
  return reply;
}
