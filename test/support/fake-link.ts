// A scripted stream link for tests: records what a stream actor sends, and lets the test speak as the server.
import type { LinkEvent, StreamLink } from '../../src/cloud/link.js';

export class FakeLink implements StreamLink {
  /** Audio chunks sent, copied as they were at the time of sending. */
  readonly audio: Buffer[] = [];
  /** Frames sent, with their capture time in Unix seconds. */
  readonly frames: Array<{ jpeg: Buffer; ts: number }> = [];
  /** What `bufferedAmount()` reports: set it to play a socket still writing. */
  buffered = 0;
  /** The close code once closed (by the actor or the server). */
  closed: number | undefined;
  private listener: ((e: LinkEvent) => void) | undefined;
  private frameWaiters: Array<() => void> = [];

  sendAudio(pcm: Buffer): boolean {
    if (this.closed !== undefined) return false;
    this.audio.push(Buffer.from(pcm));
    return true;
  }

  sendFrame(jpeg: Buffer, ts: number): boolean {
    if (this.closed !== undefined) return false;
    this.frames.push({ jpeg, ts });
    for (const w of this.frameWaiters.splice(0)) w();
    return true;
  }

  bufferedAmount(): number {
    return this.buffered;
  }

  subscribe(listener: (e: LinkEvent) => void): () => void {
    this.listener = listener;
    return () => (this.listener = undefined);
  }

  close(code = 1000): void {
    this.closed ??= code;
  }

  /** The server sends an event (a message, an invalid frame, a close). */
  server(e: LinkEvent): void {
    if (e.type === 'close') this.closed ??= e.code;
    this.listener?.(e);
  }

  /** The server sends one JSON message. */
  say(message: unknown): void {
    this.server({ type: 'message', message });
  }

  /** The vision server replies. */
  reply(text: string): void {
    this.say({ vlm_reply: text });
  }

  /** Resolves at the next frame sent, or rejects after `timeoutMs`. */
  nextFrame(timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no frame at the socket')), timeoutMs);
      this.frameWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
