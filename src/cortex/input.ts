// The input plugin contract: the spec's five operations (listen, poll, raw to text, formatted buffer, stop).
import type { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { CloudClient } from '../cloud/client.js';
import type { StreamKind, StreamState } from './events.js';

/** One piece of input turned into text, with the time it was produced (ms since epoch). */
export interface InputMessage {
  timestamp: number;
  text: string;
  /** True when the text is final (a committed transcript, a typed line); a final message wakes the loop. */
  final?: boolean;
}

/**
 * An input plugin. Raw data stays inside the plugin (and its RxJS pipelines); the runtime only sees
 * text messages and the formatted buffer. Implementations must be safe to `stop()` twice.
 */
export interface InputPlugin<Raw = unknown> {
  /** Registered type name, for example `TextInput`. */
  readonly type: string;
  /** Short label for the prompt section, for example `Voice` or `Vision`. */
  readonly descriptor: string;
  /** Listen: the channel of raw events. Subscribing starts the device or socket; unsubscribing releases it. */
  listen(): Observable<Raw>;
  /** Poll: one raw event, or undefined when none is ready before `signal` aborts. */
  poll(signal?: AbortSignal): Promise<Raw | undefined>;
  /** RawToText: convert one raw event to a message (undefined when it carries no text). */
  rawToText(raw: Raw): InputMessage | undefined;
  /**
   * FormattedLatestBuffer: the messages buffered since the last call, formatted for the prompt,
   * then cleared; undefined when nothing new arrived (so an idle robot does not call the model).
   */
  formattedLatestBuffer(): string | undefined;
  /** Stop: release every resource (device, socket, child process, timer, subscription). */
  stop(): Promise<void>;
  /**
   * The input's measure of news: true when `next` (its formatted buffer this tick) tells the model
   * something `previous` (its text in the last prompt; undefined before the first) did not. Only news
   * calls the model (src/cortex/wake.ts); without this method every new text is news.
   */
  meaningfulChange?(previous: string | undefined, next: string): boolean;
  /**
   * What `formattedLatestBuffer()` would give if `text` were its one final message (a voice input's
   * partial transcript): the turn is prepared on it while the person still speaks (actors/cortex/speculation.ts).
   */
  bufferIf?(text: string): string;
  /** Live media for a person watching (WebSim's camera and microphone panels); read on request, never put on the bus. */
  readonly preview?: InputPreview;
  /**
   * The "accepts typed text" capability (the terminal's and WebSim's text box): an input that has it
   * takes a typed line as if it came from its source.
   */
  acceptText?(line: string): void;
  /**
   * The socket session this input streams to (ASR, VLM). The input actor runs it as its child
   * `stream:<kind>` while it listens, with `input` as the session machine's input (connect, the hooks
   * that attach this input's data plane to an open socket, timing), and hands every event the session
   * emits (states, transcripts, replies, failure) to `onEvent`. A raw event `onEvent` returns (a
   * transcript) is converted (`rawToText`) and reported by the input actor at once, as one from
   * `listen()` would be: the session's event reaches the loop without a relay through the plugin.
   */
  readonly stream?: { kind: StreamKind; input: unknown; onEvent(event: { type: string; [k: string]: unknown }): Raw | undefined };
  /**
   * The device this input opens and that a session actor reopens (the microphone's recorder, an OpenCV
   * camera, a serial port). The input actor runs it as its child `device:<name>` (the session machine, `input` being
   * its input) while it listens, puts its states on the bus as `stream` events of `kind` (a `backingOff`
   * also as an `error` that says when the device is reopened), and hands every event it emits to
   * `onEvent` (a `<kind>.failed` is the device gone for good: the plugin decides whether listening
   * ends). The device's data never travels as events: it reaches the plugin through the device's own
   * observable.
   */
  readonly device?: {
    name: 'microphone' | 'camera' | 'serial';
    kind: StreamKind;
    input: unknown;
    onEvent(event: { type: string; [k: string]: unknown }): void;
  };
  /**
   * Failures of this input's device that the device recovers from itself (the local vision worker's
   * camera, reopened by the worker's own session): the input actor reports each on the bus, so none goes unseen.
   */
  readonly deviceFailures$?: Observable<{ message: string; retryInMs?: number }>;
  /**
   * The states of a device session this input's device runs outside the agent's tree (the local
   * vision worker's camera, in its own process): the input actor puts each on the bus as a `stream`
   * event of `kind`, as it does for a `device` child's, and says `stopped` when listening ends.
   */
  readonly deviceStates$?: Observable<{ kind: StreamKind; state: DeviceState }>;
  /**
   * Voice inputs: when the speech behind the finals taken since the last call ended (the robot's voice
   * activity detector) and when their first final transcript arrived, ms since the epoch; taking them
   * clears them. The loop puts them first in the turn's latency stages.
   */
  takeTurnMarks?(): { speechEndAt?: number; finalAt?: number } | undefined;
}

/** A state of a device session run elsewhere (plain data: it crosses a process boundary). */
export interface DeviceState {
  state: StreamState;
  attempt?: number;
  reason?: string;
  delay_ms?: number;
  breaker?: boolean;
}

/** What an input can show of its media on request. */
export interface InputPreview {
  /** The newest camera frame as JPEG (asking keeps frames encoded for a few seconds; the first ask may get none yet). */
  frame?(): Promise<{ jpeg: Buffer; at: number } | undefined>;
  /** The microphone's level over its newest audio chunk, in dB of full scale. */
  level?(): AudioLevel | undefined;
}

/** Loudness of one chunk of audio: RMS and peak in dBFS (0 is full scale, -90 is silence). */
export interface AudioLevel {
  rms_dbfs: number;
  peak_dbfs: number;
  at: number;
}

/** RMS and peak of signed 16-bit little-endian PCM, in dBFS (floored at -90). */
export function pcmLevel(pcm: Buffer, at: number = Date.now()): AudioLevel {
  const n = Math.floor(pcm.length / 2);
  let sum = 0;
  let peak = 0;
  for (let i = 0; i < n; i++) {
    const v = pcm.readInt16LE(i * 2);
    sum += v * v;
    const a = Math.abs(v);
    if (a > peak) peak = a;
  }
  const db = (x: number) => Math.max(-90, Math.round(20 * Math.log10(Math.max(x, 1e-9) / 32768) * 10) / 10);
  return { rms_dbfs: db(n ? Math.sqrt(sum / n) : 0), peak_dbfs: db(peak), at };
}

/** What the runtime gives an input plugin when it creates it. */
export interface InputContext {
  logger: Logger;
  /** The state directory (for inputs that persist something). */
  stateDir: string;
  /** Aborted when the mode that owns the input exits. */
  signal: AbortSignal;
  /** The hosted API (addresses and key): inputs that open its sockets need it and fail clearly without it. */
  cloud?: CloudClient;
  /** True while the robot's own speaker plays: voice inputs mute the microphone then (echo suppression). */
  speakerBusy$?: Observable<boolean>;
  /** Stops what the speaker plays now (barge-in by a voice input that allows interruption). */
  interruptSpeaker?: () => void;
  /**
   * Publishes context values (`battery_percent`, `faces`...) for `context_aware` rules: the input
   * actor hands them to the mode machine as `context.update`.
   */
  publishContext?: (values: Record<string, unknown>) => void;
  /** A recording or live view of the run (`--record`, `--foxglove`): inputs hand it the frames they send and the audio they hear. */
  media?: MediaTap;
  /** The agent's browser voice link (WebSim's microphone button): voice inputs hear the page while it streams. */
  browserAudio?: import('./browser-audio.js').BrowserAudio;
  /** The agent's newest GPS position: GPS inputs publish each fix to it. */
  positions?: import('./positions.js').PositionBoard;
  /** The robot's bodies in this process (BodyInput reads the body the move connector moves). */
  bodies?: import('./bodies.js').BodyBoard;
  /** The robot's lidar (the configuration's `lidar` block): LidarInput reads its scans. */
  lidar?: import('../config/lidar.js').LidarConfig;
}

/** Receives copies of media as it passes (never kept by the input); a slow receiver drops, it never delays the input. */
export interface MediaTap {
  frame(input: string, jpeg: Buffer, atMs: number): void;
  audio(input: string, pcm: Buffer, rate: number, atMs: number): void;
  /** Each revolution of the robot's lidar (the safety governor holds it), with how the sensor sits on the robot. */
  scan?(scan: import('../lidar/scan.js').Scan, sensorMountingDeg: number): void;
  /** A DDS sample the robot received or sent, as its CDR bytes (recorded with its ros2msg schema). */
  dds?(sample: DdsSample): void;
}

/** One DDS sample as it crossed the wire. */
export interface DdsSample {
  /** The DDS topic (`rt/odom`). */
  topic: string;
  /** `pkg/msg/Name`. */
  rosType: string;
  /** The type's ros2msg definition text (the MCAP schema). */
  schemaText: string;
  /** The serialized sample: CDR, encapsulation header first. */
  cdr: Uint8Array;
  atMs: number;
  direction: 'in' | 'out';
}

export type InputFactory = (config: unknown, ctx: InputContext) => InputPlugin;
