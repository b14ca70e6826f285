// Speech-synthesis endpoints of the local service: speechlab JSON and binary, speechb JSON; validation, reservation, a bounded pool, audio served from disk.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TTS_DEFAULTS } from '../../cloud/catalog.js';
import { PATHS, SpeechbTtsRequestSchema, SpeechlabTtsRequestSchema } from '../../cloud/protocol.js';
import { BackendError } from '../backends/chat.js';
import { parseAudioFormat, synthesize, WarmEspeak, type SynthesisRequest } from '../backends/tts.js';
import { admit, INVALID_JSON, requireApiKey, sendError, type ServiceContext } from '../context.js';
import type { VerifiedKey } from '../keys.js';
import { billedCharacters, ttsCostMicro, type TtsVendor } from '../metering.js';
import { ttsBackendFor } from '../options.js';
import { KeyBusyError, PoolBusyError } from '../pool.js';
import { audioToFile, audioToLiveFile, base64JsonBody, type AudioFile } from './audio-file.js';

/** The spec's one 400 text of the speechlab endpoints (missing input, invalid JSON, unsupported format). */
export const SPEECHLAB_BAD_REQUEST = 'Missing or invalid JSON in request';
/** Decision: the speechb endpoint's 400 text (its error bodies are not shown in the spec). */
export const SPEECHB_BAD_REQUEST = 'Missing or invalid JSON in request: text is required';
/** speechb output format (decision): 16-bit mono WAV at 22050 Hz, espeak-ng's native rate. */
export const SPEECHB_FORMAT = 'wav_22050';

const tooLong = (n: number, max: number): string => `Text too long: ${n} characters, the maximum is ${max}`;

/**
 * What both synthesis routes do first: refuse while too much audio waits for slow clients (503),
 * reserve the request's cost (or answer the refusal), and tie an abort to the client leaving early or
 * the service closing (`done()` unties it from the service). Undefined when the reply was already sent.
 */
function beginSynthesis(ctx: ServiceContext, reply: FastifyReply, key: VerifiedKey, cost: number) {
  if (ctx.pendingAudio.bytes > ctx.limits.ttsPendingBytes) {
    reply.header('retry-after', '1');
    const mb = Math.round(ctx.pendingAudio.bytes / (1024 * 1024));
    sendError(reply, 503, `Service busy: ${mb} MiB of synthesised audio is waiting for slow clients. Retry later.`);
    return undefined;
  }
  const reservation = admit(ctx, key, cost, reply);
  if (!reservation) return undefined;
  const abort = new AbortController();
  const onClosing = (): void => abort.abort();
  ctx.closing.addEventListener('abort', onClosing, { once: true });
  let closed = false;
  reply.raw.once('close', () => {
    closed = true;
    ctx.closing.removeEventListener('abort', onClosing);
    if (!reply.raw.writableFinished) abort.abort();
  });
  return { reservation, abort, replyClosed: () => closed, done: () => ctx.closing.removeEventListener('abort', onClosing) };
}

/**
 * Synthesises `sreq` for `key` and answers with `send(file)`. In order: reserve the exact price
 * (402), wait for a slot of the synthesis pool (429 for a key over its share, 503 when the queue is
 * full or limits.ttsPendingBytes of audio already wait for slow clients, both with Retry-After),
 * synthesise into a private temporary file (the pool slot is held only for this), charge, then stream
 * the file to the client and delete it when the response closes. Failures are not charged.
 */
async function synthesizeAndSend(
  ctx: ServiceContext,
  req: FastifyRequest,
  reply: FastifyReply,
  key: VerifiedKey,
  vendor: TtsVendor,
  sreq: SynthesisRequest,
  send: (file: AudioFile, contentType: string, format: string) => FastifyReply,
  warm?: WarmEspeak,
): Promise<FastifyReply> {
  const chars = billedCharacters(sreq.text);
  const cost = ttsCostMicro(vendor, chars);
  const begun = beginSynthesis(ctx, reply, key, cost);
  if (!begun) return reply;
  const { reservation, abort } = begun;
  try {
    const { file, contentType, format } = await ctx.pools.tts.run(
      key.keyId,
      async () => {
        const synthesis = await synthesize(vendor, ttsBackendFor(vendor, ctx.backends), sreq, abort.signal, warm);
        const file = await audioToFile(synthesis.audio, ctx.tmpDir, ctx.limits.ttsAudioBytes, abort.signal);
        return { file, contentType: synthesis.contentType, format: synthesis.format };
      },
      abort.signal,
    );
    ctx.pendingAudio.bytes += file.bytes;
    reply.raw.once('close', () => {
      ctx.pendingAudio.bytes -= file.bytes;
      void file.remove();
    });
    ctx.accounts.settle(reservation, { keyId: key.keyId, userId: key.userId, kind: 'tts', item: `${vendor}/tts`, quantityIn: chars, costMicro: cost });
    return send(file, contentType, format);
  } catch (err) {
    ctx.accounts.settle(reservation);
    if (abort.signal.aborted) return reply;
    if (err instanceof BackendError) {
      if (err instanceof PoolBusyError || err instanceof KeyBusyError) reply.header('retry-after', '1');
      return sendError(reply, err.status, err.message, err.details);
    }
    req.log.debug({ err }, 'synthesis failed');
    return sendError(reply, 500, `Speech synthesis failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    begun.done();
  }
}

/**
 * The binary streaming endpoint: as synthesizeAndSend, but the response starts with the first bytes
 * the synthesiser makes (no Content-Length), read back from the temporary file as it grows, so a
 * slow client still costs disk, not memory or a pool slot. The pool slot is held while synthesising;
 * the price is charged when the synthesis ends well; a synthesis that fails midway ends the body early
 * (the client sees a broken stream) and is not charged.
 */
async function synthesizeAndStream(
  ctx: ServiceContext,
  req: FastifyRequest,
  reply: FastifyReply,
  key: VerifiedKey,
  sreq: SynthesisRequest,
  warm: WarmEspeak,
): Promise<FastifyReply> {
  const chars = billedCharacters(sreq.text);
  const cost = ttsCostMicro('speechlab', chars);
  const begun = beginSynthesis(ctx, reply, key, cost);
  if (!begun) return reply;
  const { reservation, abort } = begun;
  let started: (v: { body: import('node:stream').Readable; contentType: string }) => void = () => undefined;
  const first = new Promise<{ body: import('node:stream').Readable; contentType: string }>((resolve) => (started = resolve));
  const job = ctx.pools.tts.run(
    key.keyId,
    async () => {
      const synthesis = await synthesize('speechlab', ttsBackendFor('speechlab', ctx.backends), sreq, abort.signal, warm);
      const live = audioToLiveFile(synthesis.audio, ctx.tmpDir, ctx.limits.ttsAudioBytes, abort.signal);
      started({ body: live.body, contentType: synthesis.contentType });
      return live.file;
    },
    abort.signal,
  );
  job.then(
    (file) => {
      if (begun.replyClosed()) void file.remove();
      else {
        ctx.pendingAudio.bytes += file.bytes;
        reply.raw.once('close', () => {
          ctx.pendingAudio.bytes -= file.bytes;
          void file.remove();
        });
      }
      settleQuietly(() =>
        ctx.accounts.settle(reservation, { keyId: key.keyId, userId: key.userId, kind: 'tts', item: 'speechlab/tts', quantityIn: chars, costMicro: cost }),
      );
    },
    () => settleQuietly(() => ctx.accounts.settle(reservation)),
  );
  try {
    const { body, contentType } = await Promise.race([first, job.then(() => first)]);
    return reply.type(contentType).send(body);
  } catch (err) {
    if (abort.signal.aborted) return reply;
    if (err instanceof BackendError) {
      if (err instanceof PoolBusyError || err instanceof KeyBusyError) reply.header('retry-after', '1');
      return sendError(reply, err.status, err.message, err.details);
    }
    req.log.debug({ err }, 'synthesis failed');
    return sendError(reply, 500, `Speech synthesis failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    begun.done();
  }
}

/** Parses a speechlab body; sends the 400 (or the 400 for too-long text) and returns undefined on failure. */
function speechlabRequest(ctx: ServiceContext, body: unknown, reply: FastifyReply): SynthesisRequest | undefined {
  if (body === undefined || body === INVALID_JSON) return void sendError(reply, 400, SPEECHLAB_BAD_REQUEST);
  const parsed = SpeechlabTtsRequestSchema.safeParse(body);
  if (!parsed.success) return void sendError(reply, 400, SPEECHLAB_BAD_REQUEST);
  const r = parsed.data;
  const format = parseAudioFormat(r.response_format ?? TTS_DEFAULTS.response_format);
  if (!format) return void sendError(reply, 400, SPEECHLAB_BAD_REQUEST);
  if (billedCharacters(r.input) > ctx.limits.ttsChars) return void sendError(reply, 400, tooLong(billedCharacters(r.input), ctx.limits.ttsChars));
  const voice = typeof r.voice === 'string' ? r.voice : typeof r.voice?.voice_id === 'string' ? r.voice.voice_id : undefined;
  return { text: r.input, format, speed: r.speed ?? TTS_DEFAULTS.speed, voice, vendorKey: r.speechlab_api_key, original: r };
}

/** `{"text":..., "response":"<base64>", "format":...}` streamed from the file. */
function speechlabJson(reply: FastifyReply, text: string, file: AudioFile, format: string): FastifyReply {
  const { body, length } = base64JsonBody(file, `{"text":${JSON.stringify(text)},"response":"`, `","format":${JSON.stringify(format)}}`);
  return reply.type('application/json; charset=utf-8').header('content-length', String(length)).send(body);
}

export function registerTtsRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  // espeak-ng processes kept ready for the offline backend; stopped with the service.
  const warm = new WarmEspeak();
  ctx.closing.addEventListener('abort', () => warm.close(), { once: true });
  app.post(PATHS.speechlabTts, async (req, reply) => {
    const key = requireApiKey(ctx, req, reply);
    if (!key) return reply;
    const sreq = speechlabRequest(ctx, req.body, reply);
    if (!sreq) return reply;
    return synthesizeAndSend(ctx, req, reply, key, 'speechlab', sreq, (file, _type, format) => speechlabJson(reply, sreq.text, file, format), warm);
  });

  app.post(PATHS.speechlabTtsStream, async (req, reply) => {
    const key = requireApiKey(ctx, req, reply);
    if (!key) return reply;
    const sreq = speechlabRequest(ctx, req.body, reply);
    if (!sreq) return reply;
    return synthesizeAndStream(ctx, req, reply, key, sreq, warm);
  });

  app.post(PATHS.speechbTts, async (req, reply) => {
    const key = requireApiKey(ctx, req, reply);
    if (!key) return reply;
    const body = req.body as unknown;
    const parsed = body === INVALID_JSON ? undefined : SpeechbTtsRequestSchema.safeParse(body);
    if (!parsed?.success) return sendError(reply, 400, SPEECHB_BAD_REQUEST);
    const r = parsed.data;
    if (billedCharacters(r.text) > ctx.limits.ttsChars) return sendError(reply, 400, tooLong(billedCharacters(r.text), ctx.limits.ttsChars));
    const sreq: SynthesisRequest = {
      text: r.text,
      format: parseAudioFormat(SPEECHB_FORMAT)!,
      speed: 1,
      voice: r.language_code ?? r.voice,
      original: { input: r.text, response_format: SPEECHB_FORMAT },
    };
    return synthesizeAndSend(
      ctx,
      req,
      reply,
      key,
      'speechb',
      sreq,
      (file) => {
        const { body: out, length } = base64JsonBody(file, '{"audio":"', `","format":"${SPEECHB_FORMAT}"}`);
        return reply.type('application/json; charset=utf-8').header('content-length', String(length)).send(out);
      },
      warm,
    );
  });
}

/**
 * A synthesis that ends after the service closed (the agent stopping mid-sentence) finds the accounts
 * database closed: its charge is dropped with the process, never thrown out of the promise chain.
 */
function settleQuietly(settle: () => void): void {
  try {
    settle();
  } catch {
    /* the service is closed */
  }
}
