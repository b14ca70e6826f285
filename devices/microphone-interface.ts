// The Microphone interface every binding implements (recorder, replay, RTSP, the WebSim page); devices/microphone.ts picks one.
import type { Observable } from 'rxjs';
import type { OpenableDevice } from './device-link.js';

/** Mono signed 16-bit little-endian PCM at `rate`. */
export interface Microphone {
  readonly binding: 'recorder' | 'replay' | 'websim' | 'rtsp';
  readonly rate: number;
  /**
   * The audio. Buffers have any size (chunk them with `chunkPcm`). Replay and WebSim: cold, each
   * subscription starts capturing, unsubscribing stops it; a replay that cannot read its file errors.
   * Recorder: hot, the audio of the recorder `device` runs while a session actor holds it open (it never errors).
   */
  pcm(): Observable<Buffer>;
  /**
   * A device to open and reopen (the recorder program): its owner runs it in a session actor (the ASR
   * input's child `device:microphone`, actors/streams/device-session.ts), which reopens it with the
   * backoff and breaker of src/backoff.ts. Absent for bindings with nothing to reopen.
   */
  readonly device?: OpenableDevice;
  /** The agent's WebSim page is heard too while it streams: a device that fails for good leaves the page to hear. */
  readonly hearsPage: boolean;
}
