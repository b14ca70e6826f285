// An ASR stream: microphone audio (muted while the robot speaks) pumped into a retrying socket session that emits asr.* events.
import { createActor, type Actor, type SimulatedClock } from 'xstate';
import type { Observable } from 'rxjs';
import { ASR_PRICE_PER_MINUTE } from '../../src/cloud/catalog.js';
import { isFinalTranscript } from '../../src/cloud/protocol.js';
import { chunkBytes } from '../../src/pipelines/pcm-chunker.js';
import { muteWhile } from '../../src/pipelines/mute.js';
import { loadVoiceDetector, voiceGate, type VoiceDetector, type VoiceGateStats } from '../../src/pipelines/voice-gate.js';
import { AudioPump } from './audio-pump.js';
import type { LinkConnector } from '../../src/cloud/link.js';
import { streamSessionLogic, type StreamSessionLogic, type SessionInput, type SessionTiming, type StreamCounters } from './session-machine.js';

export interface SpeakerControl {
  playing$: Observable<boolean>;
  stop(): void;
}

export interface AsrStreamOptions {
  connect: LinkConnector;
  /** PCM already cut into chunks (`chunkPcm`), mono s16le at `rate`. */
  audio$: Observable<Buffer>;
  rate: number;
  /** Audio kept while reconnecting, in ms (default 10 s); older audio is dropped and counted. */
  ringMs?: number;
  timing?: Partial<SessionTiming>;
  /** The robot's speaker: audio is muted while it plays, unless `allowInterruption`. */
  speaker?: SpeakerControl;
  /** Keep listening while the robot speaks; speech heard then stops playback (barge-in). */
  allowInterruption?: boolean;
  /**
   * Voice activity detection on the robot. `audio$` is then the raw microphone (buffers of any size):
   * silence is not sent, speech goes out with its pre-roll and hang-over in buffers of `chunkMs`, and
   * (with `allowInterruption`) a speech onset while the robot talks stops its speech at once, without
   * waiting for a transcript. Without it, `audio$` must already be chunked and everything is sent.
   */
  vad?: AsrVadOptions;
  /** Whose price the audio costs (`speechlab` socket: `speechlab`; the second socket: `general`). Default `speechlab`. */
  recognizer?: keyof typeof ASR_PRICE_PER_MINUTE;
  systemId?: string;
  now?: () => number;
  random?: () => number;
  /** Receives every event the session emits, from the first `connecting` on (registered before the actor starts). */
  onEvent?: (event: { type: string; [k: string]: unknown }) => void;
  /** XState clock (tests pass a SimulatedClock). */
  clock?: SimulatedClock;
}

export interface AsrVadOptions {
  /** WebRTC detector aggressiveness 0..3. */
  aggressiveness: number;
  onsetMs: number;
  preRollMs: number;
  hangoverMs: number;
  /**
   * Zeros sent at once at the end of an utterance to a recogniser that takes no explicit end (hosted
   * sockets commit on silence), ms. A peer that announced `end_of_utterance` (the local service) is
   * told the end instead and gets none. Default DEFAULT_COMMIT_MS.
   */
  commitMs?: number;
  chunkMs: number;
  /** Another detector (tests); default the WebRTC one at the stream's rate. */
  detector?: () => VoiceDetector | Promise<VoiceDetector>;
  /** A speech frame ended at `at` (ms since the epoch): the last one before a final is the end of speech. */
  onSpeech?: (at: number) => void;
  /** Speech began at `at`; `interrupted` says whether it stopped the robot's speech. */
  onOnset?: (at: number, interrupted: boolean) => void;
  /** The detector could not be loaded: everything is sent, as without one. */
  onUnavailable?: (err: unknown) => void;
}

/** Commit padding default for hosted recognisers, which commit after a run of silence (commonly 300-500 ms). */
export const DEFAULT_COMMIT_MS = 600;

/** Maps a server message of either ASR socket to `asr.*` events (the spec's client rule for finals). */
export function asrEvents(message: unknown): Array<{ type: string; [k: string]: unknown }> {
  if (!message || typeof message !== 'object') return [];
  const m = message as { type?: unknown; asr_reply?: unknown; message?: unknown; clientId?: unknown; error?: unknown; time?: unknown };
  if (m.type === 'partial' && typeof m.asr_reply === 'string') return [{ type: 'asr.partial', text: m.asr_reply, time: m.time }];
  if (isFinalTranscript(m)) return [{ type: 'asr.final', text: m.asr_reply, time: (message as { time?: unknown }).time }];
  if (m.type === 'connection') return [{ type: 'asr.connected', clientId: m.clientId }];
  if (m.type === 'info') return [{ type: 'asr.info', message: m.message }];
  if (m.type === 'error') return [{ type: 'asr.error', message: m.message }];
  if (typeof m.error === 'string') return [{ type: 'asr.error', message: m.error }];
  return [];
}

/** The parts of an ASR session: the session machine's input and the audio pump it attaches to each socket. */
export interface AsrSession {
  input: SessionInput;
  pump: AudioPump;
  /** What the voice gate passed and held back (zeros without `vad`). */
  gate: VoiceGateStats;
  /** Starts the audio: chunks wait in the ring until a socket is attached. */
  start(): void;
  stop(): void;
}

/**
 * Builds an ASR session without starting an actor (the input actor runs the machine as its child
 * `stream:asr`). Rate: one message per chunk. Drop policy: none while connected; while reconnecting,
 * a ring of `ringMs` (oldest dropped, counted in `pump.stats()`), sent first, in order, on the next
 * connection. With `vad`, each utterance's end follows its audio: an explicit `end_of_utterance` to a
 * peer whose `connection` message announced it (the local service), else `commitMs` of zeros. Reconnects follow the session machine's policy (a healthy connection that drops is
 * replaced at once; a `1000` close, the server's silence timeout, counts as healthy). The recognition
 * `info` restart keeps the socket, so no audio is touched. State events carry `sent_bytes` (audio and
 * keepalive silence), `dropped_bytes` and `cost_cu`.
 */
export function asrSession(options: Omit<AsrStreamOptions, 'systemId' | 'clock' | 'onEvent'>): AsrSession {
  const speaker = options.speaker;
  const muted$ = speaker && !options.allowInterruption ? options.audio$.pipe(muteWhile(speaker.playing$)) : options.audio$;
  const gate: VoiceGateStats = { passedBytes: 0, gatedBytes: 0, onsets: 0 };
  let speaking = false;
  const vad = options.vad;
  const audio$ = vad
    ? muted$.pipe(
        voiceGate(
          {
            rate: options.rate,
            detector: vad.detector ?? (() => loadVoiceDetector(options.rate, vad.aggressiveness)),
            onsetMs: vad.onsetMs,
            preRollMs: vad.preRollMs,
            hangoverMs: vad.hangoverMs,
            chunkMs: vad.chunkMs,
            ...(options.now ? { now: options.now } : {}),
            onOnset: (at) => {
              // Barge-in on the robot: the speaker stops now, not when a transcript comes back.
              const interrupt = speaking && options.allowInterruption === true;
              if (interrupt) speaker?.stop();
              vad.onOnset?.(at, interrupt);
            },
            ...(vad.onSpeech ? { onSpeech: vad.onSpeech } : {}),
            ...(vad.onUnavailable ? { onUnavailable: vad.onUnavailable } : {}),
          },
          gate,
        ),
      )
    : muted$;
  const ringBytes = chunkBytes({ rate: options.rate }, options.ringMs ?? 10_000);
  const keepaliveBytes = chunkBytes({ rate: options.rate }, 100);
  const commitMs = vad ? (vad.commitMs ?? DEFAULT_COMMIT_MS) : 0;
  const commitBytes = commitMs > 0 ? chunkBytes({ rate: options.rate }, commitMs) : 0;
  const pump = new AudioPump(audio$, ringBytes, options.now, commitBytes);
  let speakingSub: { unsubscribe(): void } | undefined;
  const perByteCu = ASR_PRICE_PER_MINUTE[options.recognizer ?? 'speechlab'] / (options.rate * 2 * 60);
  const counters = (): StreamCounters => {
    const p = pump.stats();
    const metered = p.sentBytes + p.silenceBytes;
    return { sent_bytes: metered, dropped_bytes: p.droppedBytes, cost_cu: Math.round(metered * perByteCu * 1e6) / 1e6 };
  };
  const input: SessionInput = {
    prefix: 'asr',
    connect: options.connect,
    ...(options.timing ? { timing: options.timing } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.random ? { random: options.random } : {}),
    hooks: {
      counters,
      attach: (link) => pump.attach({ sendAudio: (pcm) => link.sendAudio?.(pcm) ?? false, endUtterance: () => link.endUtterance?.() }),
      detach: () => pump.detach(),
      keepalive: () => void pump.sendSilence(keepaliveBytes, options.timing?.keepaliveMs ?? 5000),
      onMessage: (message) => {
        const events = asrEvents(message);
        if (speaking && options.allowInterruption && events.some((e) => e.type === 'asr.partial' || e.type === 'asr.final')) speaker?.stop();
        return events;
      },
      isBenignClose: (code) => code === 1000,
    },
  };
  return {
    input,
    pump,
    gate,
    start() {
      speakingSub ??= speaker?.playing$.subscribe((p) => (speaking = p));
      pump.start();
    },
    stop() {
      pump.stop();
      speakingSub?.unsubscribe();
      speakingSub = undefined;
    },
  };
}

export interface AsrStream {
  actor: Actor<StreamSessionLogic>;
  pump: AudioPump;
  gate: VoiceGateStats;
  stop(): void;
}

/** An ASR session as its own root actor (benchmarks and stream tests); the agent runs sessions inside input actors. */
export function startAsrStream(options: AsrStreamOptions): AsrStream {
  const session = asrSession(options);
  const actor = createActor(streamSessionLogic(), {
    systemId: options.systemId ?? 'asr',
    ...(options.clock ? { clock: options.clock } : {}),
    input: session.input,
  });
  session.start();
  if (options.onEvent) actor.on('*', options.onEvent);
  actor.start();
  return {
    actor,
    pump: session.pump,
    gate: session.gate,
    stop() {
      actor.send({ type: 'stop' });
      actor.stop();
      session.stop();
    },
  };
}
