// The browser's voice link of one agent: the WebSim page's microphone in (16 kHz PCM, one page at a time) and the robot's speech out to the pages that listen.
import { BehaviorSubject, Observable, Subject, finalize } from 'rxjs';

/** Rate of the PCM a page streams (mono signed 16-bit little-endian), the rate of the recognition sockets. */
export const BROWSER_MIC_RATE = 16000;

/** One clip of the robot's speech as a page plays it: a WAV or MP3 file, per sentence. */
export interface BrowserClip {
  id: number;
  mime: 'audio/wav' | 'audio/mpeg';
  data: Buffer;
  durationMs: number;
}

/** What the pages hear of the robot's voice: a sentence to play, or the order to stop (barge-in, an interrupted answer). */
export type BrowserSpeech = { type: 'clip'; clip: BrowserClip } | { type: 'stop' };

/**
 * What the agent, its voice inputs, its speakers and WebSim share. The page that holds the microphone
 * (`claim`, needs the WebSim token: the server checks) pushes its PCM; the inputs that hear the browser
 * subscribe to `microphone()`. Speakers hand every sentence they play to `speak` and every interruption
 * to `stopSpeech`; WebSim forwards them to the pages that asked to listen.
 */
export interface BrowserAudio {
  readonly rate: number;
  /** True while a page holds the microphone. */
  readonly active$: Observable<boolean>;
  /** The page's audio while one holds the microphone (hot; nothing while none does). */
  microphone(): Observable<Buffer>;
  /** `source`, counted in `listeners` while subscribed: a microphone that would hear the page wraps its audio in it. */
  hearing<T>(source: Observable<T>): Observable<T>;
  /** Microphones that would hear the page now (their inputs listen). */
  readonly listeners: number;
  /** Gives the microphone to `owner`; refused while another page holds it. */
  claim(owner: string): { ok: true } | { ok: false; reason: string };
  /** Gives the microphone back (no-op unless `owner` holds it). */
  release(owner: string): void;
  /** Audio of the page that holds the microphone; false when `owner` does not hold it. */
  push(owner: string, pcm: Buffer): boolean;
  readonly speech$: Observable<BrowserSpeech>;
  /** Pages listening to the robot's speech now (speakers skip the copy when none). */
  listening: number;
  speak(clip: Omit<BrowserClip, 'id'>): void;
  stopSpeech(): void;
}

export class BrowserAudioHub implements BrowserAudio {
  readonly rate = BROWSER_MIC_RATE;
  private owner: string | undefined;
  private readonly active = new BehaviorSubject(false);
  private readonly pcm = new Subject<Buffer>();
  private readonly speech = new Subject<BrowserSpeech>();
  private subscribed = 0;
  private nextClip = 1;
  listening = 0;
  readonly active$ = this.active.asObservable();
  readonly speech$ = this.speech.asObservable();

  get listeners(): number {
    return this.subscribed;
  }

  get holder(): string | undefined {
    return this.owner;
  }

  microphone(): Observable<Buffer> {
    return this.pcm.asObservable();
  }

  hearing<T>(source: Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      this.subscribed += 1;
      return source.subscribe(subscriber);
    }).pipe(finalize(() => (this.subscribed -= 1)));
  }

  claim(owner: string): { ok: true } | { ok: false; reason: string } {
    if (this.owner !== undefined && this.owner !== owner) return { ok: false, reason: 'another page holds the microphone: stop it there first' };
    this.owner = owner;
    if (!this.active.value) this.active.next(true);
    return { ok: true };
  }

  release(owner: string): void {
    if (this.owner !== owner) return;
    this.owner = undefined;
    this.active.next(false);
  }

  push(owner: string, pcm: Buffer): boolean {
    if (this.owner !== owner) return false;
    this.pcm.next(pcm);
    return true;
  }

  speak(clip: Omit<BrowserClip, 'id'>): void {
    if (this.listening > 0) this.speech.next({ type: 'clip', clip: { ...clip, id: this.nextClip++ } });
  }

  stopSpeech(): void {
    if (this.listening > 0) this.speech.next({ type: 'stop' });
  }
}
