// SpeechlabASRInput and SpeechbASRInput: the microphone streamed to a hosted recognition socket; finals become "Voice: ..." prompt lines.
import { EMPTY, Observable, catchError } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { SpeechbASRInputSchema, SpeechlabASRInputSchema, type AsrConfig } from '../../src/plugins/schemas/inputs.js';
import { CortexError, describeError } from '../../src/errors.js';
import { chunkPcm } from '../../src/pipelines/pcm-chunker.js';
import { createMicrophone, type Microphone } from '../../devices/microphone.js';
import { startAsrStream, type SpeakerControl } from '../streams/asr-stream.js';
import { linkFromAsrSession, type LinkConnector } from '../../src/cloud/link.js';
import type { SessionTiming } from '../streams/session-machine.js';
import { BufferedInput, InputSetupError } from './buffered-input.js';

export { SpeechbASRInputSchema, SpeechlabASRInputSchema };

/** A transcript event as the input sees it. */
export interface AsrRaw {
  kind: 'partial' | 'final';
  text: string;
  /** When the event arrived, ms since the epoch. */
  at: number;
}

export interface AsrInputDeps {
  connect: LinkConnector;
  microphone: Microphone;
  speaker?: SpeakerControl;
  ctx?: Pick<InputContext, 'logger' | 'signal'>;
}

/**
 * Listening starts the microphone and the ASR stream actor (one socket, reconnected by the actor);
 * unsubscribing or `stop()` ends both. Partials are `final: false` messages, finals `final: true`
 * (they wake the loop). The buffer keeps finals only, formatted as one `Voice: ...` line holding the
 * utterances since the last tick, which the offline rule-based model recognises as speech.
 * A fatal session error (401, policy close) ends the raw stream with that reason.
 */
export class AsrInput extends BufferedInput<AsrRaw> {
  constructor(
    type: string,
    private readonly config: AsrConfig,
    private readonly deps: AsrInputDeps,
  ) {
    super({
      type,
      descriptor: config.descriptor ?? 'Voice',
      bufferSize: config.buffer_size,
      policy: 'all',
      keep: (m) => m.final === true,
      ...(deps.ctx?.logger ? { logger: deps.ctx.logger } : {}),
      ...(deps.ctx?.signal ? { signal: deps.ctx.signal } : {}),
    });
  }

  protected source(): Observable<AsrRaw> {
    return new Observable<AsrRaw>((subscriber) => {
      const { microphone } = this.deps;
      const rate = microphone.rate;
      const audio$ = microphone.pcm().pipe(
        chunkPcm({ rate, periodMs: this.config.chunk_ms }),
        catchError((err: unknown) => {
          subscriber.error(new CortexError('microphone_failed', `${this.type}: microphone stopped: ${describeError(err)}`, { cause: err }));
          return EMPTY;
        }),
      );
      const timing: Partial<SessionTiming> = { connectTimeoutMs: this.config.connect_timeout_ms, backoffMaxMs: this.config.backoff_max_ms };
      const stream = startAsrStream({
        connect: this.deps.connect,
        audio$,
        rate,
        ringMs: this.config.ring_ms,
        timing,
        ...(this.deps.speaker ? { speaker: this.deps.speaker } : {}),
        allowInterruption: this.config.allow_interruption ?? this.config.enable_tts_interrupt ?? false,
        systemId: `input.${this.type}`,
      });
      const subs = [
        stream.actor.on('asr.partial', (e) => subscriber.next({ kind: 'partial', text: String(e.text), at: Date.now() })),
        stream.actor.on('asr.final', (e) => subscriber.next({ kind: 'final', text: String(e.text), at: Date.now() })),
        stream.actor.on('asr.error', (e) => this.logger?.warn({ input: this.type, message: e.message }, 'recognition error')),
        stream.actor.on('asr.state', (e) => this.logger?.debug({ input: this.type, state: e.state, error: e.error }, 'recognition socket')),
        stream.actor.on('asr.failed', (e) =>
          subscriber.error(new CortexError('asr_failed', `${this.type}: recognition stopped: ${String(e.reason)}`)),
        ),
      ];
      return () => {
        for (const s of subs) s.unsubscribe();
        stream.stop();
      };
    });
  }

  rawToText(raw: AsrRaw): InputMessage | undefined {
    const text = raw.text.trim();
    return text ? { timestamp: raw.at, text, final: raw.kind === 'final' } : undefined;
  }

  protected override format(messages: InputMessage[]): string {
    return `${this.descriptor}: ${messages.map((m) => m.text).join(' ')}`;
  }
}

function speakerOf(ctx: InputContext): SpeakerControl | undefined {
  if (!ctx.speakerBusy$) return undefined;
  return { playing$: ctx.speakerBusy$, stop: () => ctx.interruptSpeaker?.() };
}

function needCloud(type: string, ctx: InputContext) {
  if (!ctx.cloud) throw new InputSetupError(type, 'needs the hosted service (cloud client) to open its recognition socket');
  return ctx.cloud;
}

/** The SpeechlabASRInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createSpeechlabAsrInput: InputFactory = (raw, ctx) => {
  const config = SpeechlabASRInputSchema.parse(raw ?? {});
  const cloud = needCloud('SpeechlabASRInput', ctx);
  const microphone = createMicrophone(config.microphone, { logger: ctx.logger });
  const connect: LinkConnector = async (signal) =>
    linkFromAsrSession(
      await cloud.openSpeechlabAsr({ rate: microphone.rate as 16000, languageCode: config.language, v1: config.v1, signal, connectTimeoutMs: config.connect_timeout_ms }),
    );
  const speaker = speakerOf(ctx);
  return new AsrInput('SpeechlabASRInput', config, { connect, microphone, ctx, ...(speaker ? { speaker } : {}) });
};

/** The SpeechbASRInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createSpeechbAsrInput: InputFactory = (raw, ctx) => {
  const config = SpeechbASRInputSchema.parse(raw ?? {});
  const cloud = needCloud('SpeechbASRInput', ctx);
  const microphone = createMicrophone(config.microphone, { logger: ctx.logger });
  const connect: LinkConnector = async (signal) =>
    linkFromAsrSession(await cloud.openSpeechbAsr({ rate: microphone.rate, languageCode: config.language, signal, connectTimeoutMs: config.connect_timeout_ms }));
  const speaker = speakerOf(ctx);
  return new AsrInput('SpeechbASRInput', config, { connect, microphone, ctx, ...(speaker ? { speaker } : {}) });
};
