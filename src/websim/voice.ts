// WebSim's voice: the page's microphone as binary 16 kHz PCM frames, and the robot's speech sent to the pages that listen
// Microphone frames are taken only from the page that claimed the microphone with the token, and bounded in rate.
import { z } from 'zod';
import type { BrowserAudio, BrowserSpeech } from '../cortex/browser-audio.js';

export const VoiceMessages = [
  /** Claims the microphone for this page (needs the WebSim token); its binary frames are then the agent's microphone. */
  z.strictObject({ type: z.literal('mic.start'), id: z.number().int() }),
  z.strictObject({ type: z.literal('mic.stop'), id: z.number().int() }),
  /** Asks for (or stops) the robot's speech on this page. */
  z.strictObject({ type: z.literal('speech.listen'), id: z.number().int(), on: z.boolean() }),
] as const;
export type VoiceMessage = z.infer<(typeof VoiceMessages)[number]>;
export const isVoiceMessage = (m: { type: string }): m is VoiceMessage => m.type === 'mic.start' || m.type === 'mic.stop' || m.type === 'speech.listen';

/** What the server sends a listening page of the robot's speech (one WAV/MP3 per sentence, base64), or a stop. */
export type SpeechMessage = { type: 'speech'; id: number; mime: string; duration_ms: number; data: string } | { type: 'speech.stop' };

/** How much audio a page may send: real time with headroom, and a burst (a tab that was throttled catches up). */
export interface AudioLimits {
  /** Sustained bytes per second (16 kHz s16le is 32,000). */
  bytesPerSecond: number;
  /** Bytes that may arrive at once beyond the sustained rate. */
  burstBytes: number;
}

export const DEFAULT_AUDIO_LIMITS: AudioLimits = { bytesPerSecond: 48_000, burstBytes: 96_000 };

/** What one page's voice state is: its key (the microphone's owner), whether it listens, its audio allowance. */
export interface PageVoiceState {
  key: string;
  listening: boolean;
  allowance: { bytes: number; at: number };
}

export type Reply = { type: 'reply'; id: number; ok: boolean; reason?: string };

/** The outcome of a binary frame from a page: heard, ignored (this page does not hold the microphone), or a reason to close the socket. */
export type AudioOutcome = { ok: true; heard: boolean } | { ok: false; close: 'audio flood' | 'bad audio' };

/**
 * The server's side of the browser voice link. `handle` answers the three voice messages (the token
 * rule is checked before, in messages.ts: `mic.start` needs it); `audio` takes one binary frame;
 * `closed` forgets a page (its microphone is released, it stops listening).
 */
export class WebSimVoice {
  constructor(
    private readonly hub: BrowserAudio | undefined,
    private readonly limits: AudioLimits = DEFAULT_AUDIO_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  state(key: string): PageVoiceState {
    return { key, listening: false, allowance: { bytes: this.limits.burstBytes, at: this.now() } };
  }

  /** The robot's speech, for the server to forward to listening pages. */
  get speech$() {
    return this.hub?.speech$;
  }

  handle(voice: PageVoiceState, m: VoiceMessage): Reply {
    const hub = this.hub;
    if (!hub) return { type: 'reply', id: m.id, ok: false, reason: 'this agent has no voice link to the page' };
    if (m.type === 'speech.listen') {
      if (m.on !== voice.listening) hub.listening += m.on ? 1 : -1;
      voice.listening = m.on;
      return { type: 'reply', id: m.id, ok: true, reason: m.on ? 'the robot speaks here too' : 'not listening' };
    }
    if (m.type === 'mic.stop') {
      hub.release(voice.key);
      return { type: 'reply', id: m.id, ok: true, reason: 'microphone off' };
    }
    if (hub.listeners === 0) {
      return {
        type: 'reply',
        id: m.id,
        ok: false,
        reason: 'no input of the current mode listens to a microphone (a SpeechlabASRInput or SpeechbASRInput hears the page)',
      };
    }
    const claimed = hub.claim(voice.key);
    if (!claimed.ok) return { type: 'reply', id: m.id, ok: false, reason: claimed.reason };
    return { type: 'reply', id: m.id, ok: true, reason: `the robot hears this page (${hub.rate} Hz)` };
  }

  /**
   * One binary frame: 16-bit mono PCM at 16 kHz. Every frame counts against the page's allowance
   * (held or not), so a page that sends faster than real time with headroom is cut; an odd length is
   * not PCM. Frames of a page that does not hold the microphone are dropped (a few arrive after a stop).
   */
  audio(voice: PageVoiceState, data: Buffer): AudioOutcome {
    if (data.length % 2 !== 0) return { ok: false, close: 'bad audio' };
    const now = this.now();
    const a = voice.allowance;
    a.bytes = Math.min(this.limits.burstBytes, a.bytes + ((now - a.at) * this.limits.bytesPerSecond) / 1000);
    a.at = now;
    if (data.length > a.bytes) return { ok: false, close: 'audio flood' };
    a.bytes -= data.length;
    return { ok: true, heard: this.hub?.push(voice.key, data) ?? false };
  }

  closed(voice: PageVoiceState): void {
    if (!this.hub) return;
    this.hub.release(voice.key);
    if (voice.listening) this.hub.listening -= 1;
    voice.listening = false;
  }
}

/** A speech event as the page's message. */
export function speechMessage(e: BrowserSpeech): SpeechMessage {
  if (e.type === 'stop') return { type: 'speech.stop' };
  return { type: 'speech', id: e.clip.id, mime: e.clip.mime, duration_ms: Math.round(e.clip.durationMs), data: e.clip.data.toString('base64') };
}
