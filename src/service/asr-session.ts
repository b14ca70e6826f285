// One speech-recognition socket session: parse audio messages, meter them, detect utterances, send partials, transcripts, info and errors.
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { ASR_DEFAULT_RATE, ASR_RATES } from '../cloud/catalog.js';
import { AsrClientMessageSchema, SpeechbAsrClientMessageSchema } from '../cloud/protocol.js';
import { LIVE_TAIL_BYTES, type LiveUtterance, PocketsphinxRecognizer, trimTrailingZeros } from './backends/pocketsphinx.js';
import { EnergyVad, resampleS16 } from './backends/vad.js';
import type { ServiceContext } from './context.js';
import type { VerifiedKey } from './keys.js';
import { asrCostMicro } from './metering.js';
import { KeyBusyError, PoolBusyError } from './pool.js';
import { boundedSender } from './ws-send.js';

/** Fixed prefix of every `error` event message (spec: "a fixed error text plus details"). */
export const ASR_ERROR_PREFIX = 'Recognition error: ';
/** Speech between two partial decodes, in ms. */
export const PARTIAL_EVERY_MS = 800;
/** The second socket accepts rates 8000..48000 Hz (decision; the spec leaves them open). */
const SPEECHB_RATES = { min: 8000, max: 48000 };
/** Utterances of one session waiting for their final decode; one more is refused with an error event. */
export const MAX_PENDING_FINALS = 4;

/**
 * Session behaviour:
 * - `speechlab`: sends `connection` with `clientId`; `partial` while speech continues (a decode every
 *   PARTIAL_EVERY_MS of speech, skipped while one is running); a committed transcript (no `type`)
 *   when an utterance ends; `info` when the internal session restarts (limits.asrSessionMs); `error`
 *   events prefixed ASR_ERROR_PREFIX. A bad message is reported and the session continues; a bad
 *   first-message rate or an exhausted balance is reported, then the socket closes (1008).
 * - `speechb`: only `{asr_reply}` for committed transcripts; its errors are `{error}` frames.
 * - Both close with 1000 "silence timeout" after limits.asrSilenceMs without detected speech.
 * - An utterance ends after 500 ms of silence (EnergyVad), or at once on a client message with
 *   `end_of_utterance: true` (our extension, announced in `connection`: the robot's voice detector
 *   decided speech ended, so it sends no silence padding and the decoder hears none).
 * - Finals are decoded live when a decoder slot is free: from the start of an utterance its audio goes,
 *   piece by piece, to a decoder process started ahead (warm), which at the commit has only the last
 *   piece left; trailing zeros (the robot's end-of-utterance padding) beyond 100 ms are not fed. A live
 *   decoder (warm or decoding) holds a slot of the shared recognizer pool (`tryHold`: the pool's total,
 *   and per key at most perKeyRunning live decoders, counted apart from the key's one-shot decodes),
 *   so a flood of sockets starts no more processes than the pool allows. An utterance that began with
 *   no slot free is decoded whole in the pool at its commit (waiting its turn). At most
 *   MAX_PENDING_FINALS committed utterances of a session may be finishing, one more is dropped with
 *   `Recognition error: recognizer busy: ...` (also when the pool refuses the fallback decode).
 * - Partials are one-shot decodes in the service's shared recognizer pool (ctx.pools.asr:
 *   limits.asrDecoders processes at once, keys in turn): skipped when no recognizer is free, stopped
 *   when their utterance is committed.
 * - A client that does not read its messages is closed 1008 (ws-send.ts).
 * Audio is metered per message over the cumulative session bytes (35 CU/min speechlab, 50 general);
 * the session ends (1008) once the account's balance, less what requests in progress reserved, is
 * not positive: it may overdraw by at most one message of audio.
 */
export function startAsrSession(ws: WebSocket, key: VerifiedKey, flavour: 'speechlab' | 'speechb', ctx: ServiceContext): void {
  const clientId = randomUUID();
  const abort = new AbortController();
  // Live decoders (warm or decoding) hold slots of the shared recognizer pool: a key's sessions together never run more than the pool allows.
  const recognizer = new PocketsphinxRecognizer({ grammar: ctx.backends?.asr?.grammar, slot: () => ctx.pools.asr.tryHold(key.keyId) });
  const log = ctx.logger.child({ socket: flavour, clientId });
  let rate: number | undefined;
  let vad: EnergyVad | undefined;
  let bytes = 0;
  let chargedMicro = 0;
  let odd: Buffer | undefined;
  let utteranceNo = 0;
  let partialBusy = false;
  let lastPartialMs = 0;
  let lastPartialText = '';
  let finals: Promise<void> = Promise.resolve();
  let closed = false;

  const bounded = boundedSender(ws, ctx.limits.wsSendQueueBytes);
  const send = (msg: Record<string, unknown>): void => {
    if (!closed) bounded(msg);
  };
  let pendingFinals = 0;
  const sendError = (details: string): void =>
    flavour === 'speechlab' ? send({ type: 'error', message: ASR_ERROR_PREFIX + details, clientId }) : send({ error: ASR_ERROR_PREFIX + details });
  const fatal = (details: string): void => {
    sendError(details);
    ws.close(1008, details.slice(0, 120));
  };

  let silenceTimer = setTimeout(() => ws.close(1000, 'silence timeout'), ctx.limits.asrSilenceMs);
  const heardSpeech = (): void => {
    clearTimeout(silenceTimer);
    silenceTimer = setTimeout(() => ws.close(1000, 'silence timeout'), ctx.limits.asrSilenceMs);
  };

  const decode = (pcm: Buffer, signal: AbortSignal = abort.signal): Promise<string> =>
    ctx.pools.asr.run(key.keyId, () => recognizer.decode(resampleS16(pcm, rate ?? ASR_DEFAULT_RATE, 16000), signal), signal);
  /** The running partial decode; a committed utterance stops it so the final does not wait behind it. */
  let partialAbort: AbortController | undefined;

  /** The utterance being decoded while it is spoken, and how many of its bytes (session rate) it has had. */
  let live: LiveUtterance | undefined;
  let fedBytes = 0;
  const feed = (utterance: Buffer, to: LiveUtterance | undefined = live): void => {
    if (!to || utterance.length <= fedBytes) return;
    to.write(resampleS16(utterance.subarray(fedBytes), rate ?? ASR_DEFAULT_RATE, 16000));
    fedBytes = utterance.length;
  };

  const commit = (pcm: Buffer): void => {
    utteranceNo++;
    partialAbort?.abort();
    const utterance = live;
    live = undefined;
    if (pendingFinals >= MAX_PENDING_FINALS) {
      utterance?.abort();
      return sendError(`recognizer busy: ${MAX_PENDING_FINALS} utterances of this session are waiting; this one was dropped`);
    }
    let text: Promise<string>;
    if (utterance) {
      // The robot pads the end of an utterance with zeros so the endpointing commits at once: the decoder needs only a little of them.
      const keep = Math.round((LIVE_TAIL_BYTES * (rate ?? ASR_DEFAULT_RATE)) / 16000) & ~1;
      feed(trimTrailingZeros(pcm, keep), utterance);
      // The decoder finishes now; only the order in which finals are sent is kept.
      text = utterance.finish();
    } else {
      // No live decoder was free when the utterance began: the whole utterance waits its turn in the pool.
      text = decode(pcm);
    }
    text.catch(() => undefined);
    pendingFinals++;
    finals = finals.then(async () => {
      try {
        const said = await text;
        if (!said) return;
        if (flavour === 'speechlab') send({ asr_reply: said, clientId, time: Date.now() });
        else send({ asr_reply: said });
      } catch (err) {
        if (!abort.signal.aborted) {
          if (err instanceof PoolBusyError || err instanceof KeyBusyError) sendError(`recognizer busy: ${err.message} This utterance was dropped.`);
          else {
            log.warn({ err }, 'decode failed');
            sendError(`decoder failed: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      } finally {
        pendingFinals--;
        // The live decoder's slot is free again: the next utterance's decoder warms if the pool allows.
        if (!closed) recognizer.prewarm();
      }
    });
  };

  const partial = (pcm: Buffer, speechMs: number): void => {
    if (flavour !== 'speechlab' || partialBusy || speechMs - lastPartialMs < PARTIAL_EVERY_MS) return;
    // Partials are best effort: skipped unless a recognizer is free at once.
    if (!ctx.pools.asr.canStartNow(key.keyId)) return;
    lastPartialMs = speechMs;
    partialBusy = true;
    const forUtterance = utteranceNo;
    const own = new AbortController();
    partialAbort = own;
    decode(pcm, AbortSignal.any([abort.signal, own.signal]))
      .then((text) => {
        // A partial that finishes after its utterance was committed is dropped: finals win.
        if (text && text !== lastPartialText && forUtterance === utteranceNo) {
          lastPartialText = text;
          send({ type: 'partial', asr_reply: text, clientId, time: Date.now() });
        }
      })
      .catch(() => undefined)
      .finally(() => {
        partialBusy = false;
        if (partialAbort === own) partialAbort = undefined;
      });
  };

  const restartTimer = setInterval(() => {
    const pending = vad?.flush();
    if (pending) commit(pending);
    lastPartialMs = 0;
    if (flavour === 'speechlab') send({ type: 'info', message: 'Recognition session restarted', clientId });
  }, ctx.limits.asrSessionMs);

  ws.on('message', (data, isBinary) => {
    if (closed || ws.readyState !== ws.OPEN) return;
    if (isBinary) return sendError('expected a JSON text message');
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString());
    } catch {
      return sendError('message is not valid JSON');
    }
    const schema = flavour === 'speechlab' ? AsrClientMessageSchema : SpeechbAsrClientMessageSchema;
    const parsed = schema.safeParse(raw);
    if (rate === undefined) {
      const r = (raw as { rate?: unknown } | null)?.rate ?? ASR_DEFAULT_RATE;
      const ok =
        typeof r === 'number' &&
        (flavour === 'speechlab' ? (ASR_RATES as readonly number[]).includes(r) : Number.isInteger(r) && r >= SPEECHB_RATES.min && r <= SPEECHB_RATES.max);
      if (!ok) return fatal(`unsupported sample rate ${JSON.stringify(r)}; use one of ${ASR_RATES.join(', ')}`);
      rate = r as number;
      vad = new EnergyVad({ rate });
      recognizer.prewarm();
    }
    if (!parsed.success) return sendError(`invalid message: ${parsed.error.issues[0]?.message ?? 'bad shape'}`);
    let pcm = Buffer.from(parsed.data.audio, 'base64');
    if (odd) pcm = Buffer.concat([odd, pcm]);
    odd = pcm.length % 2 ? pcm.subarray(pcm.length - 1) : undefined;
    if (odd) pcm = pcm.subarray(0, pcm.length - 1);

    bytes += pcm.length;
    const total = asrCostMicro(flavour === 'speechlab' ? 'speechlab' : 'general', bytes, rate);
    if (total > chargedMicro) {
      const charged = ctx.accounts.charge({
        keyId: key.keyId,
        userId: key.userId,
        kind: 'asr',
        item: `${flavour}/asr@${rate}`,
        quantityIn: pcm.length,
        costMicro: total - chargedMicro,
      });
      // The balance ran out within this chunk: what was free is charged, and the session ends.
      if (charged < total - chargedMicro) return fatal('Insufficient CU balance');
      chargedMicro = total;
    }
    for (const ev of vad!.push(pcm)) {
      if (ev.type === 'start') {
        lastPartialMs = 0;
        lastPartialText = '';
        live?.abort();
        live = recognizer.begin();
        fedBytes = 0;
      } else if (ev.type === 'speech') {
        heardSpeech();
        feed(ev.pcm);
        partial(ev.pcm, ev.speechMs);
      } else commit(ev.pcm);
    }
    // The client's detector ended the utterance (our extension): commit what there is now, no silence needed.
    if (parsed.data.end_of_utterance === true) {
      const pending = vad!.flush();
      if (pending) commit(pending);
    }
    if (ctx.accounts.freeMicro(key.userId) <= 0) fatal('Insufficient CU balance');
  });

  ws.on('close', () => {
    closed = true;
    live?.abort();
    clearTimeout(silenceTimer);
    clearInterval(restartTimer);
    abort.abort();
    // Nobody reads the finals any more: every decoder stops now (a hung one cannot keep its process).
    recognizer.close();
  });
  ws.on('error', (err) => log.debug({ err }, 'socket error'));

  // `end_of_utterance: true`: this server takes the client's end of an utterance (an extension; hosted servers get silence instead).
  if (flavour === 'speechlab') send({ type: 'connection', message: 'Connected to speech recognition', clientId, end_of_utterance: true });
  log.debug('recognition session started');
}
