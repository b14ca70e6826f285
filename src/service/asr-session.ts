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
  new AsrSession(ws, key, flavour, ctx).start();
}

/** The state of one recognition socket; its handlers are the socket's `message` and `close`. */
class AsrSession {
  private readonly clientId = randomUUID();
  private readonly abort = new AbortController();
  private readonly recognizer: PocketsphinxRecognizer;
  private readonly log: ServiceContext['logger'];
  private readonly bounded: (msg: Record<string, unknown>) => void;
  private rate: number | undefined;
  private vad: EnergyVad | undefined;
  private bytes = 0;
  private chargedMicro = 0;
  private odd: Buffer | undefined;
  private utteranceNo = 0;
  private partialBusy = false;
  private lastPartialMs = 0;
  private lastPartialText = '';
  private finals: Promise<void> = Promise.resolve();
  private closed = false;
  private pendingFinals = 0;
  private silenceTimer: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  /** The running partial decode; a committed utterance stops it so the final does not wait behind it. */
  private partialAbort: AbortController | undefined;
  /** The utterance being decoded while it is spoken, and how many of its bytes (session rate) it has had. */
  private live: LiveUtterance | undefined;
  private fedBytes = 0;

  constructor(
    private readonly ws: WebSocket,
    private readonly key: VerifiedKey,
    private readonly flavour: 'speechlab' | 'speechb',
    private readonly ctx: ServiceContext,
  ) {
    // Live decoders (warm or decoding) hold slots of the shared recognizer pool: a key's sessions together never run more than the pool allows.
    this.recognizer = new PocketsphinxRecognizer({ grammar: ctx.backends?.asr?.grammar, slot: () => ctx.pools.asr.tryHold(key.keyId) });
    this.log = ctx.logger.child({ socket: flavour, clientId: this.clientId });
    this.bounded = boundedSender(ws, ctx.limits.wsSendQueueBytes);
  }

  start(): void {
    this.silenceTimer = setTimeout(() => this.ws.close(1000, 'silence timeout'), this.ctx.limits.asrSilenceMs);
    this.restartTimer = setInterval(() => this.restart(), this.ctx.limits.asrSessionMs);
    this.ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    this.ws.on('close', () => this.onClose());
    this.ws.on('error', (err) => this.log.debug({ err }, 'socket error'));
    // `end_of_utterance: true`: this server takes the client's end of an utterance (an extension; hosted servers get silence instead).
    if (this.flavour === 'speechlab')
      this.send({ type: 'connection', message: 'Connected to speech recognition', clientId: this.clientId, end_of_utterance: true });
    this.log.debug('recognition session started');
  }

  private send(msg: Record<string, unknown>): void {
    if (!this.closed) this.bounded(msg);
  }

  private sendError(details: string): void {
    if (this.flavour === 'speechlab') this.send({ type: 'error', message: ASR_ERROR_PREFIX + details, clientId: this.clientId });
    else this.send({ error: ASR_ERROR_PREFIX + details });
  }

  private fatal(details: string): void {
    this.sendError(details);
    this.ws.close(1008, details.slice(0, 120));
  }

  private heardSpeech(): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => this.ws.close(1000, 'silence timeout'), this.ctx.limits.asrSilenceMs);
  }

  private decode(pcm: Buffer, signal: AbortSignal = this.abort.signal): Promise<string> {
    return this.ctx.pools.asr.run(this.key.keyId, () => this.recognizer.decode(resampleS16(pcm, this.rate ?? ASR_DEFAULT_RATE, 16000), signal), signal);
  }

  private feed(utterance: Buffer, to: LiveUtterance | undefined = this.live): void {
    if (!to || utterance.length <= this.fedBytes) return;
    to.write(resampleS16(utterance.subarray(this.fedBytes), this.rate ?? ASR_DEFAULT_RATE, 16000));
    this.fedBytes = utterance.length;
  }

  /** An utterance ended: its final is decoded (live, or whole in the pool) and sent in order. */
  private commit(pcm: Buffer): void {
    this.utteranceNo++;
    this.partialAbort?.abort();
    const utterance = this.live;
    this.live = undefined;
    if (this.pendingFinals >= MAX_PENDING_FINALS) {
      utterance?.abort();
      return this.sendError(`recognizer busy: ${MAX_PENDING_FINALS} utterances of this session are waiting; this one was dropped`);
    }
    let text: Promise<string>;
    if (utterance) {
      // The robot pads the end of an utterance with zeros so the endpointing commits at once: the decoder needs only a little of them.
      const keep = Math.round((LIVE_TAIL_BYTES * (this.rate ?? ASR_DEFAULT_RATE)) / 16000) & ~1;
      this.feed(trimTrailingZeros(pcm, keep), utterance);
      // The decoder finishes now; only the order in which finals are sent is kept.
      text = utterance.finish();
    } else {
      // No live decoder was free when the utterance began: the whole utterance waits its turn in the pool.
      text = this.decode(pcm);
    }
    text.catch(() => undefined);
    this.pendingFinals++;
    this.finals = this.finals.then(() => this.sendFinal(text));
  }

  /** Sends one final (after the ones before it), or the error that dropped it. */
  private async sendFinal(text: Promise<string>): Promise<void> {
    try {
      const said = await text;
      if (!said) return;
      if (this.flavour === 'speechlab') this.send({ asr_reply: said, clientId: this.clientId, time: Date.now() });
      else this.send({ asr_reply: said });
    } catch (err) {
      if (!this.abort.signal.aborted) {
        if (err instanceof PoolBusyError || err instanceof KeyBusyError) this.sendError(`recognizer busy: ${err.message} This utterance was dropped.`);
        else {
          this.log.warn({ err }, 'decode failed');
          this.sendError(`decoder failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    } finally {
      this.pendingFinals--;
      // The live decoder's slot is free again: the next utterance's decoder warms if the pool allows.
      if (!this.closed) this.recognizer.prewarm();
    }
  }

  private partial(pcm: Buffer, speechMs: number): void {
    if (this.flavour !== 'speechlab' || this.partialBusy || speechMs - this.lastPartialMs < PARTIAL_EVERY_MS) return;
    // Partials are best effort: skipped unless a recognizer is free at once.
    if (!this.ctx.pools.asr.canStartNow(this.key.keyId)) return;
    this.lastPartialMs = speechMs;
    this.partialBusy = true;
    const forUtterance = this.utteranceNo;
    const own = new AbortController();
    this.partialAbort = own;
    this.decode(pcm, AbortSignal.any([this.abort.signal, own.signal]))
      .then((text) => {
        // A partial that finishes after its utterance was committed is dropped: finals win.
        if (text && text !== this.lastPartialText && forUtterance === this.utteranceNo) {
          this.lastPartialText = text;
          this.send({ type: 'partial', asr_reply: text, clientId: this.clientId, time: Date.now() });
        }
      })
      .catch(() => undefined)
      .finally(() => {
        this.partialBusy = false;
        if (this.partialAbort === own) this.partialAbort = undefined;
      });
  }

  /** The internal session restarts (limits.asrSessionMs): what is pending is committed. */
  private restart(): void {
    const pending = this.vad?.flush();
    if (pending) this.commit(pending);
    this.lastPartialMs = 0;
    if (this.flavour === 'speechlab') this.send({ type: 'info', message: 'Recognition session restarted', clientId: this.clientId });
  }

  /** The first message sets the rate (a bad one ends the session); false when it ended. */
  private setRate(raw: unknown): boolean {
    const r = (raw as { rate?: unknown } | null)?.rate ?? ASR_DEFAULT_RATE;
    const ok =
      typeof r === 'number' &&
      (this.flavour === 'speechlab' ? (ASR_RATES as readonly number[]).includes(r) : Number.isInteger(r) && r >= SPEECHB_RATES.min && r <= SPEECHB_RATES.max);
    if (!ok) {
      this.fatal(`unsupported sample rate ${JSON.stringify(r)}; use one of ${ASR_RATES.join(', ')}`);
      return false;
    }
    this.rate = r as number;
    this.vad = new EnergyVad({ rate: this.rate });
    this.recognizer.prewarm();
    return true;
  }

  /** Charges the session's audio so far; false when the balance ran out within this chunk (the session ended). */
  private meter(pcm: Buffer): boolean {
    this.bytes += pcm.length;
    const total = asrCostMicro(this.flavour === 'speechlab' ? 'speechlab' : 'general', this.bytes, this.rate ?? ASR_DEFAULT_RATE);
    if (total <= this.chargedMicro) return true;
    const charged = this.ctx.accounts.charge({
      keyId: this.key.keyId,
      userId: this.key.userId,
      kind: 'asr',
      item: `${this.flavour}/asr@${this.rate}`,
      quantityIn: pcm.length,
      costMicro: total - this.chargedMicro,
    });
    // The balance ran out within this chunk: what was free is charged, and the session ends.
    if (charged < total - this.chargedMicro) {
      this.fatal('Insufficient CU balance');
      return false;
    }
    this.chargedMicro = total;
    return true;
  }

  /** Whole samples of this message (an odd byte waits for the next). */
  private samples(audio: string): Buffer {
    let pcm = Buffer.from(audio, 'base64');
    if (this.odd) pcm = Buffer.concat([this.odd, pcm]);
    this.odd = pcm.length % 2 ? pcm.subarray(pcm.length - 1) : undefined;
    return this.odd ? pcm.subarray(0, pcm.length - 1) : pcm;
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    if (isBinary) return this.sendError('expected a JSON text message');
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString());
    } catch {
      return this.sendError('message is not valid JSON');
    }
    const schema = this.flavour === 'speechlab' ? AsrClientMessageSchema : SpeechbAsrClientMessageSchema;
    const parsed = schema.safeParse(raw);
    if (this.rate === undefined && !this.setRate(raw)) return;
    if (!parsed.success) return this.sendError(`invalid message: ${parsed.error.issues[0]?.message ?? 'bad shape'}`);
    const pcm = this.samples(parsed.data.audio);
    if (!this.meter(pcm)) return;
    for (const ev of this.vad!.push(pcm)) {
      if (ev.type === 'start') {
        this.lastPartialMs = 0;
        this.lastPartialText = '';
        this.live?.abort();
        this.live = this.recognizer.begin();
        this.fedBytes = 0;
      } else if (ev.type === 'speech') {
        this.heardSpeech();
        this.feed(ev.pcm);
        this.partial(ev.pcm, ev.speechMs);
      } else this.commit(ev.pcm);
    }
    // The client's detector ended the utterance (our extension): commit what there is now, no silence needed.
    if (parsed.data.end_of_utterance === true) {
      const pending = this.vad!.flush();
      if (pending) this.commit(pending);
    }
    if (this.ctx.accounts.freeMicro(this.key.userId) <= 0) this.fatal('Insufficient CU balance');
  }

  private onClose(): void {
    this.closed = true;
    this.live?.abort();
    clearTimeout(this.silenceTimer);
    clearInterval(this.restartTimer);
    this.abort.abort();
    // Nobody reads the finals any more: every decoder stops now (a hung one cannot keep its process).
    this.recognizer.close();
  }
}
