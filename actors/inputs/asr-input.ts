// SpeechlabASRInput and SpeechbASRInput: the microphone streamed to a hosted recognition socket; finals become "Voice: ..." prompt lines.
import { EMPTY, Observable, catchError, tap } from 'rxjs';
import { pcmLevel, type AudioLevel, type InputContext, type InputFactory, type InputMessage, type InputPlugin } from '../../src/cortex/input.js';
import { SpeechbASRInputSchema, SpeechlabASRInputSchema, type AsrConfig } from '../../src/plugins/schemas/inputs.js';
import { CortexError, describeError } from '../../src/errors.js';
import { chunkPcm } from '../../src/pipelines/pcm-chunker.js';
import { createMicrophone, type Microphone } from '../../devices/microphone.js';
import { asrSession, type AsrSession, type SpeakerControl } from '../streams/asr-stream.js';
import { linkFromAsrSession, type LinkConnector } from '../../src/cloud/link.js';
import type { SessionTiming } from '../streams/session-machine.js';
import { deviceSessionInput } from '../streams/device-session.js';
import type { VoiceDetector } from '../../src/pipelines/voice-gate.js';
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
  /** Another voice detector (tests); default the WebRTC one. */
  detector?: () => VoiceDetector | Promise<VoiceDetector>;
  speaker?: SpeakerControl;
  ctx?: Partial<Pick<InputContext, 'logger' | 'signal' | 'publishContext' | 'media'>>;
}

/** The recognition socket stopped for good (a refused key, a policy close): retrying cannot help. */
export class StreamStoppedError extends CortexError {
  readonly fatal = true;
  constructor(code: string, message: string) {
    super(code, message);
    this.name = 'StreamStoppedError';
  }
}

/** What the input says in the prompt while its socket is not streaming. */
export function healthOf(state: string): string | undefined {
  if (state === 'streaming') return undefined;
  if (state === 'failed') return 'stopped';
  return state === 'connecting' ? 'connecting' : 'reconnecting';
}

/**
 * What the prompt says of a session's state event, read from the event alone (the session actor owns
 * the connection's state; the input keeps no copy): undefined while streaming, null when there is
 * nothing to say (the session's first connection, before it ever streamed, is not an outage), else why.
 */
export function streamHealth(e: { [k: string]: unknown }): string | null | undefined {
  const health = healthOf(String(e.state));
  return health === 'connecting' && !Number(e.connections) ? null : health;
}

/**
 * Its socket session runs as the input actor's child `stream:asr` (`stream`); listening starts the
 * microphone, whose audio waits in the session's ring until a socket is open. One way for a
 * transcript: the session actor emits it, the input actor hands it to `stream.onEvent`, which makes
 * the raw event (and the turn marks) and returns it, and the input actor reports it at once; the
 * raw stream `listen()` carries only the end of listening (a microphone that gave up, a session that
 * failed for good). Partials are `final: false` messages, finals `final: true` (they wake the loop). The buffer keeps finals only,
 * formatted as one `Voice: ...` line holding the utterances since the last tick, which the offline
 * rule-based model recognises as speech. Each resource retries in one layer, its own session actor
 * (actors/streams/session-machine.ts): the microphone's recorder is a session of its own (`device`,
 * the input actor's child `device:microphone`, events `mic.*`), reopened with the session machine's
 * backoff and breaker while the socket stays open; the socket's session reconnects while the
 * microphone's audio waits in the ring. A microphone gone for good (no capture device, `max_restarts`
 * runs in a row with no audio, a replay file it cannot read) ends the raw stream and the input stops
 * (the input actor does not restart an input with a session), unless the agent's WebSim page can
 * still be heard; a fatal socket error (401, policy close) stops it with StreamStoppedError. Every
 * state of the socket and of the recorder is on the bus and, while the socket is not streaming, the
 * prompt says so once.
 */
export class AsrInput extends BufferedInput<AsrRaw> {
  readonly stream: NonNullable<InputPlugin['stream']>;
  /** The microphone's recorder, opened and reopened by its own session actor (absent for a replay or the page alone). */
  readonly device?: NonNullable<InputPlugin['device']>;
  private readonly session: AsrSession;
  /** Ends the listening subscription with an error (set while `source()` is subscribed). */
  private fail: ((err: unknown) => void) | undefined;
  private lastUtteranceAt: number | undefined;
  /** End of the last speech frame the robot's detector heard, ms since the epoch. */
  private lastSpeechAt: number | undefined;
  /** The turn marks of the finals not yet taken by a tick. */
  private marks: { speechEndAt?: number; finalAt: number } | undefined;
  private level: AudioLevel | undefined;
  private levelRead = false;
  /** The microphone's level: the loudest chunk since the last ask (WebSim's meter asks four times a second). */
  readonly preview = {
    level: (): AudioLevel | undefined => {
      this.levelRead = true;
      return this.level;
    },
  };

  constructor(
    type: string,
    config: AsrConfig,
    private readonly deps: AsrInputDeps,
  ) {
    super({
      type,
      descriptor: config.descriptor ?? 'Voice',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'all',
      keep: (m) => m.final === true,
      ...(deps.ctx?.logger ? { logger: deps.ctx.logger } : {}),
      ...(deps.ctx?.signal ? { signal: deps.ctx.signal } : {}),
    });
    const { microphone } = deps;
    const vad = config.vad.enabled;
    const raw$ = microphone.pcm().pipe(
      // The loudest chunk since WebSim last asked, for its microphone meter (a few µs per chunk).
      tap((chunk: Buffer) => {
        const level = pcmLevel(chunk);
        const last = this.levelRead ? undefined : this.level;
        this.level = last ? { rms_dbfs: Math.max(last.rms_dbfs, level.rms_dbfs), peak_dbfs: Math.max(last.peak_dbfs, level.peak_dbfs), at: level.at } : level;
        this.levelRead = false;
        deps.ctx?.media?.audio(type, chunk, microphone.rate, Date.now());
      }),
      catchError((err: unknown) => {
        this.fail?.(new CortexError('microphone_failed', `${type}: microphone stopped: ${describeError(err)}`, { cause: err }));
        return EMPTY;
      }),
    );
    // With voice detection the gate cuts the raw audio into messages itself (flushing at the end of speech).
    const audio$ = vad ? raw$ : raw$.pipe(chunkPcm({ rate: microphone.rate, periodMs: config.chunk_ms }));
    const timing: Partial<SessionTiming> = { connectTimeoutMs: config.connect_timeout_ms, backoffMaxMs: config.backoff_max_ms };
    this.session = asrSession({
      connect: deps.connect,
      audio$,
      rate: microphone.rate,
      ringMs: config.ring_ms,
      timing,
      ...(deps.speaker ? { speaker: deps.speaker } : {}),
      allowInterruption: config.allow_interruption ?? config.enable_tts_interrupt ?? false,
      ...(vad
        ? {
            vad: {
              aggressiveness: config.vad.aggressiveness,
              onsetMs: config.vad.onset_ms,
              preRollMs: config.vad.pre_roll_ms,
              hangoverMs: config.vad.hangover_ms,
              commitMs: config.vad.commit_ms,
              chunkMs: config.chunk_ms,
              onSpeech: (at: number) => (this.lastSpeechAt = at),
              onUnavailable: (err: unknown) => this.logger?.warn(`${type}: ${describeError(err)}; sending all audio`),
              ...(deps.detector ? { detector: deps.detector } : {}),
            },
          }
        : {}),
    });
    this.stream = { kind: 'asr', input: this.session.input, onEvent: (e) => this.onSessionEvent(e) };
    if (microphone.device)
      this.device = { name: 'microphone', kind: 'mic', input: deviceSessionInput(microphone.device, 'mic'), onEvent: (e) => this.onDeviceEvent(e) };
  }

  /** The recorder gone for good ends listening, unless the WebSim page is still there to hear. */
  private onDeviceEvent(e: { type: string; [k: string]: unknown }): void {
    if (e.type !== 'mic.failed') return;
    const why = `${this.type}: microphone stopped: ${String(e.reason)}`;
    // The failure itself is on the bus (the `mic` stream's `failed`, with its reason): this says what is left.
    if (this.deps.microphone.hearsPage) this.logger?.info(`${this.type} hears only the WebSim page's microphone now (its own stopped)`);
    else this.fail?.(new CortexError('microphone_failed', why));
  }

  /** Audio the session's ring dropped or sent (for metrics and tests). */
  get pump() {
    return this.session.pump;
  }

  /** Listening: starts the microphone into the session; emits no transcripts (they come from the session actor), only ends with an error. */
  protected source(): Observable<AsrRaw> {
    return new Observable<AsrRaw>((subscriber) => {
      this.fail = (err) => subscriber.error(err);
      this.session.start();
      return () => {
        this.fail = undefined;
        this.session.stop();
      };
    });
  }

  /** A session event: a transcript becomes the raw event the input actor reports (returned); states say the input's health. */
  private onSessionEvent(e: { type: string; [k: string]: unknown }): AsrRaw | undefined {
    const at = Date.now();
    if (e.type === 'asr.partial') return this.heard({ kind: 'partial', text: String(e.text), at });
    if (e.type === 'asr.final') {
      this.lastUtteranceAt = at;
      this.marks ??= { finalAt: at, ...(this.lastSpeechAt !== undefined && this.lastSpeechAt <= at ? { speechEndAt: this.lastSpeechAt } : {}) };
      this.deps.ctx?.publishContext?.({ last_utterance_at: at });
      return this.heard({ kind: 'final', text: String(e.text), at });
    }
    if (e.type === 'asr.error') this.logger?.warn({ input: this.type, message: e.message }, 'recognition error');
    else if (e.type === 'asr.state') {
      const health = streamHealth(e);
      if (health === undefined) this.available();
      else if (health !== null) this.unavailable(health);
    } else if (e.type === 'asr.failed') {
      this.unavailable('stopped');
      this.fail?.(new StreamStoppedError('asr_failed', `${this.type}: recognition stopped: ${String(e.reason)}`));
    }
    return undefined;
  }

  takeTurnMarks(): { speechEndAt?: number; finalAt?: number } | undefined {
    const marks = this.marks;
    this.marks = undefined;
    return marks;
  }

  /** Audio the voice gate passed and held back. */
  get gate() {
    return this.session.gate;
  }

  /** When the last final transcript arrived (ms since the epoch), if any. */
  get lastUtterance(): number | undefined {
    return this.lastUtteranceAt;
  }

  protected toMessage(raw: AsrRaw): InputMessage | undefined {
    const text = raw.text.trim();
    return text ? { timestamp: raw.at, text, final: raw.kind === 'final' } : undefined;
  }

  protected override format(messages: InputMessage[]): string {
    return `${this.descriptor}: ${messages.map((m) => m.text).join(' ')}`;
  }

  bufferIf(text: string): string {
    return this.format([{ timestamp: 0, text: text.trim(), final: true }]);
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
  const microphone = createMicrophone(config.microphone, { logger: ctx.logger, ...(ctx.browserAudio ? { browser: ctx.browserAudio } : {}) });
  const connect: LinkConnector = async (signal) =>
    linkFromAsrSession(
      await cloud.openSpeechlabAsr({
        rate: microphone.rate as 16000,
        languageCode: config.language,
        v1: config.v1,
        signal,
        connectTimeoutMs: config.connect_timeout_ms,
      }),
    );
  const speaker = speakerOf(ctx);
  return new AsrInput('SpeechlabASRInput', config, { connect, microphone, ctx, ...(speaker ? { speaker } : {}) });
};

/** The SpeechbASRInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createSpeechbAsrInput: InputFactory = (raw, ctx) => {
  const config = SpeechbASRInputSchema.parse(raw ?? {});
  const cloud = needCloud('SpeechbASRInput', ctx);
  const microphone = createMicrophone(config.microphone, { logger: ctx.logger, ...(ctx.browserAudio ? { browser: ctx.browserAudio } : {}) });
  const connect: LinkConnector = async (signal) =>
    linkFromAsrSession(
      await cloud.openSpeechbAsr({ rate: microphone.rate, languageCode: config.language, signal, connectTimeoutMs: config.connect_timeout_ms }),
    );
  const speaker = speakerOf(ctx);
  return new AsrInput('SpeechbASRInput', config, { connect, microphone, ctx, ...(speaker ? { speaker } : {}) });
};
