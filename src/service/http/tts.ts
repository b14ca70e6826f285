// Speech-synthesis endpoints of the local service: speechlab JSON and binary stream, speechb JSON; validation, limits, metering.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TTS_DEFAULTS } from '../../cloud/catalog.js';
import { PATHS, SpeechbTtsRequestSchema, SpeechlabTtsRequestSchema } from '../../cloud/protocol.js';
import { BackendError } from '../backends/chat.js';
import { parseAudioFormat, readAll, synthesize, type Synthesis, type SynthesisRequest } from '../backends/tts.js';
import { INVALID_JSON, requireApiKey, requireBalance, sendError, type ServiceContext } from '../context.js';
import type { VerifiedKey } from '../keys.js';
import { billedCharacters, ttsCostMicro, type TtsVendor } from '../metering.js';
import { ttsBackendFor } from '../options.js';

/** The spec's one 400 text of the speechlab endpoints (missing input, invalid JSON, unsupported format). */
export const SPEECHLAB_BAD_REQUEST = 'Missing or invalid JSON in request';
/** Decision: the speechb endpoint's 400 text (its error bodies are not shown in the spec). */
export const SPEECHB_BAD_REQUEST = 'Missing or invalid JSON in request: text is required';
/** speechb output format (decision): 16-bit mono WAV at 22050 Hz, espeak-ng's native rate. */
export const SPEECHB_FORMAT = 'wav_22050';

function charge(ctx: ServiceContext, key: VerifiedKey, vendor: TtsVendor, text: string): void {
  const chars = billedCharacters(text);
  ctx.accounts.charge({ keyId: key.keyId, userId: key.userId, kind: 'tts', item: `${vendor}/tts`, quantityIn: chars, costMicro: ttsCostMicro(vendor, chars) });
}

/** Starts a synthesis with the route's abort wiring, mapping failures to the spec's errors. */
async function run(
  ctx: ServiceContext,
  req: FastifyRequest,
  reply: FastifyReply,
  vendor: TtsVendor,
  sreq: SynthesisRequest,
): Promise<{ synthesis?: Synthesis; abort: AbortController }> {
  const abort = new AbortController();
  const onClosing = (): void => abort.abort();
  ctx.closing.addEventListener('abort', onClosing, { once: true });
  reply.raw.on('close', () => {
    ctx.closing.removeEventListener('abort', onClosing);
    if (!reply.raw.writableFinished) abort.abort();
  });
  try {
    return { synthesis: await synthesize(vendor, ttsBackendFor(vendor, ctx.backends), sreq, abort.signal), abort };
  } catch (err) {
    if (err instanceof BackendError) sendError(reply, err.status, err.message, err.details);
    else sendError(reply, 500, `Speech synthesis failed: ${err instanceof Error ? err.message : String(err)}`);
    req.log.debug({ err }, 'synthesis failed');
    return { abort };
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
  if (billedCharacters(r.input) > ctx.limits.ttsChars)
    return void sendError(reply, 400, `Text too long: ${billedCharacters(r.input)} characters, the maximum is ${ctx.limits.ttsChars}`);
  const voice = typeof r.voice === 'string' ? r.voice : typeof r.voice?.voice_id === 'string' ? r.voice.voice_id : undefined;
  return { text: r.input, format, speed: r.speed ?? TTS_DEFAULTS.speed, voice, vendorKey: r.speechlab_api_key, original: r };
}

export function registerTtsRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.post(PATHS.speechlabTts, async (req, reply) => {
    const key = requireApiKey(ctx, req, reply);
    if (!key) return reply;
    const sreq = speechlabRequest(ctx, req.body, reply);
    if (!sreq || !requireBalance(ctx, key, reply)) return reply;
    const { synthesis } = await run(ctx, req, reply, 'speechlab', sreq);
    if (!synthesis) return reply;
    let audio: Buffer;
    try {
      audio = await readAll(synthesis.audio);
    } catch (err) {
      req.log.debug({ err }, 'reading synthesis failed');
      return sendError(reply, 500, 'Failed to read response body');
    }
    charge(ctx, key, 'speechlab', sreq.text);
    return reply.send({ text: sreq.text, response: audio.toString('base64'), format: synthesis.format });
  });

  app.post(PATHS.speechlabTtsStream, async (req, reply) => {
    const key = requireApiKey(ctx, req, reply);
    if (!key) return reply;
    const sreq = speechlabRequest(ctx, req.body, reply);
    if (!sreq || !requireBalance(ctx, key, reply)) return reply;
    const { synthesis } = await run(ctx, req, reply, 'speechlab', sreq);
    if (!synthesis) return reply;
    // Charged in full once audio starts flowing: the synthesis has been done by then.
    synthesis.audio.once('data', () => charge(ctx, key, 'speechlab', sreq.text));
    return reply.type(synthesis.contentType).send(synthesis.audio);
  });

  app.post(PATHS.speechbTts, async (req, reply) => {
    const key = requireApiKey(ctx, req, reply);
    if (!key) return reply;
    const body = req.body as unknown;
    const parsed = body === INVALID_JSON ? undefined : SpeechbTtsRequestSchema.safeParse(body);
    if (!parsed?.success) return sendError(reply, 400, SPEECHB_BAD_REQUEST);
    const r = parsed.data;
    if (billedCharacters(r.text) > ctx.limits.ttsChars)
      return sendError(reply, 400, `Text too long: ${billedCharacters(r.text)} characters, the maximum is ${ctx.limits.ttsChars}`);
    if (!requireBalance(ctx, key, reply)) return reply;
    const format = parseAudioFormat(SPEECHB_FORMAT)!;
    const { synthesis } = await run(ctx, req, reply, 'speechb', {
      text: r.text,
      format,
      speed: 1,
      voice: r.language_code ?? r.voice,
      original: { input: r.text, response_format: SPEECHB_FORMAT },
    });
    if (!synthesis) return reply;
    let audio: Buffer;
    try {
      audio = await readAll(synthesis.audio);
    } catch {
      return sendError(reply, 500, 'Failed to read response body');
    }
    charge(ctx, key, 'speechb', r.text);
    return reply.send({ audio: audio.toString('base64'), format: SPEECHB_FORMAT });
  });
}
