// Frames PCM chunks into ASR socket messages: base64 audio, with rate and language only in the first message of a connection.
import { Observable, type OperatorFunction } from 'rxjs';

/** A message the ASR sockets take; `rate` and `language_code` appear only in the first of a connection. */
export interface AsrOutgoingMessage {
  audio: string;
  rate?: number;
  language_code?: string;
}

export interface AsrFramingOptions {
  /** Sample rate in Hz, sent in the first message. */
  rate: number;
  /** BCP-47 code (`en`, or region form `en-US` for the speechb socket); `auto` means automatic detection. */
  languageCode?: string;
}

/**
 * Frames chunks for one connection. The first `frame()` after construction or `reset()` carries
 * `rate` and `language_code`; later ones carry only `audio`. Call `reset()` on every (re)connect.
 */
export class AsrFramer {
  private first = true;
  constructor(private readonly options: AsrFramingOptions) {}

  reset(): void {
    this.first = true;
  }

  frame(chunk: Buffer): AsrOutgoingMessage {
    const audio = chunk.toString('base64');
    if (!this.first) return { audio };
    this.first = false;
    return { audio, rate: this.options.rate, language_code: this.options.languageCode ?? 'auto' };
  }
}

/**
 * Operator form: every subscription is one connection, so it starts with a first message.
 * Rate: one message per chunk. Drop policy: none.
 */
export function frameAsr(options: AsrFramingOptions): OperatorFunction<Buffer, AsrOutgoingMessage> {
  return (source) =>
    new Observable<AsrOutgoingMessage>((subscriber) => {
      const framer = new AsrFramer(options);
      return source.subscribe({
        next: (chunk) => subscriber.next(framer.frame(chunk)),
        error: (err) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}

/** The message as the socket gets it (one JSON text frame). */
export function encodeAsrMessage(message: AsrOutgoingMessage): string {
  return JSON.stringify(message);
}
