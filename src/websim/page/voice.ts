// The page's voice: the microphone button (the browser's microphone as 16 kHz PCM over the socket) and the robot's speech played in the page
// The robot's speech is played sentence by sentence.
import type { ClientMessage } from './state.js';

type Outgoing = ClientMessage extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;
type Send = (m: Outgoing) => Promise<{ ok: boolean; reason?: string }>;

/** The rate the agent's voice inputs hear (src/cortex/browser-audio.ts). */
const RATE = 16000;
/** Samples per processing block at the context's rate (about 85-128 ms): one binary frame each. */
const BLOCK = 2048;

/**
 * Float samples at `from` Hz to 16-bit PCM at RATE: each output sample is the mean of the input
 * samples it covers (a box filter, enough for speech recognition), the fraction carried to the next block.
 */
class Downsampler {
  private carry: number[] = [];
  constructor(private readonly from: number) {}
  take(input: Float32Array): Int16Array {
    const samples = this.carry.length ? Float32Array.from([...this.carry, ...input]) : input;
    const ratio = this.from / RATE;
    const n = Math.floor(samples.length / ratio);
    const out = new Int16Array(n);
    for (let i = 0; i < n; i++) {
      const start = Math.floor(i * ratio);
      const end = Math.max(start + 1, Math.floor((i + 1) * ratio));
      let sum = 0;
      for (let j = start; j < end; j++) sum += samples[j]!;
      const v = Math.max(-1, Math.min(1, sum / (end - start)));
      out[i] = v < 0 ? v * 0x8000 : v * 0x7fff;
    }
    this.carry = Array.from(samples.subarray(Math.floor(n * ratio)));
    return out;
  }
}

interface Capture {
  stop(): void;
}

/** Opens the microphone and hands each block of 16 kHz PCM to `frame` until stopped. */
async function capture(frame: (pcm: ArrayBuffer) => void): Promise<Capture> {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
  let ctx: AudioContext;
  let source: MediaStreamAudioSourceNode;
  try {
    ctx = new AudioContext({ sampleRate: RATE });
    source = ctx.createMediaStreamSource(stream);
  } catch {
    // A browser that cannot resample a live stream into a 16 kHz context: take its rate and downsample here.
    ctx = new AudioContext();
    source = ctx.createMediaStreamSource(stream);
  }
  const down = new Downsampler(ctx.sampleRate);
  const processor = ctx.createScriptProcessor(BLOCK, 1, 1);
  const mute = ctx.createGain();
  mute.gain.value = 0;
  processor.onaudioprocess = (e) => {
    const pcm = down.take(e.inputBuffer.getChannelData(0));
    if (pcm.length) frame(pcm.buffer as ArrayBuffer);
  };
  source.connect(processor);
  // A processor runs only when connected to the output; through a silent gain the page does not echo the microphone.
  processor.connect(mute);
  mute.connect(ctx.destination);
  return {
    stop: () => {
      processor.onaudioprocess = null;
      source.disconnect();
      processor.disconnect();
      for (const track of stream.getTracks()) track.stop();
      void ctx.close();
    },
  };
}

export interface VoiceElements {
  mic: HTMLButtonElement;
  listen: HTMLButtonElement;
  note: HTMLElement;
  audio: HTMLAudioElement;
}

/** The note under the voice buttons and the buttons' pressed state and words. */
function voiceButtons(els: VoiceElements) {
  return {
    say(text: string, bad = false) {
      els.note.textContent = text;
      els.note.classList.toggle('bad', bad);
    },
    setMic(on: boolean) {
      els.mic.setAttribute('aria-pressed', String(on));
      els.mic.textContent = on ? 'Stop talking' : 'Talk';
      els.mic.dataset.state = on ? 'on' : 'off';
    },
    setListening(on: boolean) {
      els.listen.setAttribute('aria-pressed', String(on));
      els.listen.textContent = on ? 'Mute the robot' : 'Hear the robot';
    },
  };
}

/**
 * The robot's speech in the page's audio element: clips queued as blob: URLs and played one after the
 * other. The element's data attributes count the clips and the time played, so a test and a person can
 * tell sound left the page.
 */
function robotVoice(els: VoiceElements, say: (text: string, bad?: boolean) => void) {
  const queue: string[] = [];
  let clips = 0;
  let playedMs = 0;
  let lastTime = 0;
  const clear = () => {
    els.audio.pause();
    for (const url of queue) URL.revokeObjectURL(url);
    queue.length = 0;
    els.audio.removeAttribute('src');
    els.audio.dataset.playing = 'false';
  };
  const next = () => {
    const url = queue.shift();
    if (!url) return void (els.audio.dataset.playing = 'false');
    lastTime = 0;
    els.audio.src = url;
    els.audio.dataset.playing = 'true';
    els.audio.play().catch((err: Error) => say(`The robot's voice cannot play here: ${err.message}`, true));
  };
  // Played time grows as the element plays.
  els.audio.addEventListener('timeupdate', () => {
    const t = els.audio.currentTime;
    if (t > lastTime) playedMs += (t - lastTime) * 1000;
    lastTime = t;
    els.audio.dataset.playedMs = String(Math.round(playedMs));
  });
  els.audio.addEventListener('ended', () => {
    if (els.audio.src.startsWith('blob:')) URL.revokeObjectURL(els.audio.src);
    next();
  });
  return {
    clear,
    /** Queues one clip of the server's speech; it plays now when nothing else does. */
    play(m: { mime: string; data: string }) {
      const bytes = Uint8Array.from(atob(m.data), (c) => c.charCodeAt(0));
      queue.push(URL.createObjectURL(new Blob([bytes], { type: m.mime })));
      clips += 1;
      els.audio.dataset.clips = String(clips);
      if (els.audio.dataset.playing !== 'true') next();
    },
  };
}

/**
 * Mounts the two voice buttons. Talk claims the microphone (it needs the WebSim token: a page that only
 * watches is told so) and also turns on the robot's voice; Hear turns the robot's voice on or off alone.
 * Returns the handlers of the server's speech messages and of a lost socket.
 */
export function mountVoice(
  els: VoiceElements,
  send: Send,
  sendAudio: (pcm: ArrayBuffer) => boolean,
): { speech(m: { id: number; mime: string; data: string }): void; stop(): void; disconnected(): void } {
  let mic: Capture | null = null;
  let listening = false;
  const ui = voiceButtons(els);
  const voice = robotVoice(els, ui.say);
  const setListening = (on: boolean) => {
    listening = on;
    ui.setListening(on);
  };

  const listen = async (on: boolean): Promise<boolean> => {
    const reply = await send({ type: 'speech.listen', on });
    if (reply.ok) setListening(on);
    if (!on) voice.clear();
    return reply.ok;
  };
  const stopMic = async (why?: string) => {
    mic?.stop();
    mic = null;
    ui.setMic(false);
    await send({ type: 'mic.stop' });
    if (why) ui.say(why);
  };
  // The server grants the microphone first (or says why not), then the browser is asked for it.
  const startMic = async () => {
    const reply = await send({ type: 'mic.start' });
    if (!reply.ok) return ui.say(`Microphone not on: ${reply.reason ?? 'refused'}`, true);
    try {
      mic = await capture((pcm) => {
        if (!sendAudio(pcm)) void stopMic('Microphone off: the connection to the agent was lost.');
      });
    } catch (err) {
      await send({ type: 'mic.stop' });
      return ui.say(`Microphone not on: the browser refused it (${(err as Error).message})`, true);
    }
    ui.setMic(true);
    if (!listening) await listen(true);
    ui.say(`Talking: ${reply.reason ?? 'the robot hears this page'}.`);
  };

  els.mic.addEventListener('click', () => void (mic ? stopMic('Microphone off.') : startMic()));
  els.listen.addEventListener('click', () => void listen(!listening));
  ui.setMic(false);
  setListening(false);

  return {
    speech(m) {
      if (listening) voice.play(m);
    },
    stop() {
      voice.clear();
      els.audio.dataset.stops = String(Number(els.audio.dataset.stops ?? 0) + 1);
    },
    disconnected() {
      // The server released the microphone and forgot the listener with the socket.
      if (mic) {
        mic.stop();
        mic = null;
        ui.setMic(false);
        ui.say('Microphone off: the connection to the agent was lost.');
      }
      if (listening) setListening(false), voice.clear();
    },
  };
}
