// Chat completions endpoint of the local service: validation in the spec's order, reservation, backend call, SSE streaming, settlement.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { createParser } from 'eventsource-parser';
import { isProvider, modelSupported, unsupportedModelMessage, type Provider } from '../../cloud/catalog.js';
import {
  AssistantMessageSchema,
  ChatCompletionRequestSchema,
  SystemMessageSchema,
  ToolMessageSchema,
  UserMessageSchema,
  type ChatCompletionRequest,
} from '../../cloud/protocol.js';
import { BackendError, createChatBackend, estimatePromptTokens } from '../backends/chat.js';
import type { Reservation } from '../accounts.js';
import { admit, INVALID_JSON, requireApiKey, sendError, type ServiceContext } from '../context.js';
import type { VerifiedKey } from '../keys.js';
import { estimateTokens } from '../metering.js';
import { chatBackendFor } from '../options.js';
import { chargedUsage, chatBounds, settleChat, type ChatBounds } from './chat-metering.js';

/** Decision: the 400 text of a body that is JSON but not an object (`null`, a list, a number). */
export const NOT_AN_OBJECT = 'Invalid request: the body must be a JSON object';

function zodSummary(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`)
    .join('; ');
}

const BY_ROLE = { system: SystemMessageSchema, user: UserMessageSchema, assistant: AssistantMessageSchema, tool: ToolMessageSchema } as const;

/**
 * The first invalid message, checked against its own role's schema only, or undefined. The request
 * schema's union tries every role on every bad message and builds an issue for each: 10,000 empty
 * objects took it seconds of the event loop. This stops at the first bad message instead.
 */
export function firstInvalidMessage(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as { role?: unknown } | null;
    const role = m !== null && typeof m === 'object' ? m.role : undefined;
    const schema = typeof role === 'string' && Object.hasOwn(BY_ROLE, role) ? BY_ROLE[role as keyof typeof BY_ROLE] : undefined;
    if (!schema) return `messages.${i}.role: expected one of system, user, assistant, tool`;
    const r = schema.safeParse(m);
    if (!r.success) return zodSummary(r.error.issues.map((x) => ({ ...x, path: ['messages', i, ...x.path] })));
  }
  return undefined;
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
    if (typeof model === 'string' && !modelSupported(provider, model)) return sendError(reply, 404, unsupportedModelMessage(provider, model));
    const badMessage = firstInvalidMessage((body as { messages?: unknown }).messages);
    if (badMessage) return sendError(reply, 400, `Invalid request: ${badMessage}`);
    const parsed = ChatCompletionRequestSchema.safeParse(body);
    if (!parsed.success) return sendError(reply, 400, `Invalid request: ${zodSummary(parsed.error.issues)}`);
    const cfg = chatBackendFor(provider, ctx.backends);
    const bounds = chatBounds(ctx, provider, parsed.data, cfg.kind === 'rules');
    // A request without an output bound is sent upstream with the one it was reserved for.
    const request: ChatCompletionRequest = bounds.injectMaxTokens ? { ...parsed.data, max_tokens: bounds.outputTokens } : parsed.data;
    const reservation = admit(
      ctx,
      key,
      bounds.reserveMicro,
      reply,
      `at most ${bounds.promptTokens} prompt tokens and ${bounds.outputTokens} output tokens of ${request.model}`,
    );
    if (!reservation) return reply;

    const backend = createChatBackend(provider, cfg);
    const abort = new AbortController();
    const onClosing = (): void => abort.abort();
    ctx.closing.addEventListener('abort', onClosing);
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    try {
      if (request.stream) return await streamCompletion(ctx, reply, key, provider, request, backend, abort.signal, reservation, bounds);
      const completion = await backend.complete(request, abort.signal);
      const usage = chargedUsage(
        ctx,
        bounds,
        completion.usage,
        () => ({
          prompt_tokens: estimatePromptTokens(request),
          completion_tokens: estimateTokens(String(completion.choices?.[0]?.message?.content ?? '')),
          total_tokens: 0,
        }),
        { provider, model: request.model },
      );
      settleChat(ctx, reservation, key, provider, request.model, usage);
      // The usage in the answer is the one charged.
      return reply.send({ ...completion, usage });
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
  bounds: ChatBounds,
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
      const charged = chargedUsage(
        ctx,
        bounds,
        usage,
        () => ({
          prompt_tokens: estimatePromptTokens(request),
          completion_tokens: streamedChars === 0 ? 0 : Math.max(1, Math.ceil(streamedChars / 4)),
          total_tokens: 0,
        }),
        { provider, model: request.model },
      );
      settleChat(ctx, reservation, key, provider, request.model, charged);
    } catch (err) {
      ctx.logger.error({ err, provider }, 'charging a streamed completion failed');
    }
  }
  return reply;
}
