// The connection a session actor drives, reduced to what it needs (send, close, events), with adapters for the cloud sessions.
import type { AsrSession, VisionSession } from './sockets.js';
import type { CloudSocket } from './socket.js';

export type LinkEvent =
  | { type: 'message'; message: unknown }
  | { type: 'invalid'; raw: string; reason: string }
  /** `fatal`: retrying with the same settings cannot succeed (the engine stops in `failed` with `reason`). */
  | { type: 'close'; code: number; reason: string; fatal?: boolean };

/** An open socket session; it never reconnects (the actor does). */
export interface StreamLink {
  sendAudio?(pcm: Buffer): boolean;
  /**
   * Tells the recogniser the utterance ended: true sent, false not open, undefined when the peer did
   * not announce it takes an explicit end (hosted sockets: the caller sends silence to commit on).
   */
  endUtterance?(): boolean | undefined;
  sendFrame?(jpeg: Buffer, timestampSeconds: number): boolean;
  /** Bytes queued but not yet written (vision applies latest-frame-wins on it). */
  bufferedAmount(): number;
  /** Calls `listener` for every event until the returned function is called. */
  subscribe(listener: (event: LinkEvent) => void): () => void;
  close(code?: number, reason?: string): void;
}

/** Opens a new link; rejects with a CloudSocketError (fatal on 401/4xx) or aborts with `signal`. */
export type LinkConnector = (signal: AbortSignal) => Promise<StreamLink>;

function subscribeSocket(socket: CloudSocket<unknown, unknown>, listener: (event: LinkEvent) => void): () => void {
  const onMessage = (message: unknown) => listener({ type: 'message', message });
  const onInvalid = (raw: string, reason: string) => listener({ type: 'invalid', raw, reason });
  const onClose = (code: number, reason: string) => listener({ type: 'close', code, reason });
  const onError = () => undefined; // a close always follows
  socket.on('message', onMessage);
  socket.on('invalid', onInvalid);
  socket.on('close', onClose);
  socket.on('error', onError);
  return () => {
    socket.off('message', onMessage);
    socket.off('invalid', onInvalid);
    socket.off('close', onClose);
    socket.off('error', onError);
  };
}

/** Whether a server message is the local service's `connection` announcing it takes `end_of_utterance`. */
function announcesEnd(message: unknown): boolean {
  const m = message as { type?: unknown; end_of_utterance?: unknown } | null;
  return m?.type === 'connection' && m.end_of_utterance === true;
}

export function linkFromAsrSession(session: AsrSession<unknown>): StreamLink {
  const socket = session.socket as unknown as CloudSocket<unknown, unknown>;
  // Learnt from the server's `connection` message (the first frame it sends), never assumed.
  let takesEnd = false;
  return {
    sendAudio: (pcm) => session.sendAudio(pcm),
    endUtterance: () => (takesEnd ? session.endUtterance() : undefined),
    bufferedAmount: () => socket.bufferedAmount,
    subscribe: (listener) =>
      subscribeSocket(socket, (event) => {
        if (event.type === 'message' && announcesEnd(event.message)) takesEnd = true;
        listener(event);
      }),
    close: (code, reason) => session.close(code, reason),
  };
}

export function linkFromVisionSession(session: VisionSession): StreamLink {
  const socket = session.socket as unknown as CloudSocket<unknown, unknown>;
  return {
    sendFrame: (jpeg, ts) => session.sendFrame(jpeg, ts),
    bufferedAmount: () => socket.bufferedAmount,
    subscribe: (listener) => subscribeSocket(socket, listener),
    close: (code, reason) => session.close(code, reason),
  };
}
