// The e-stop latch shared between the e-stop socket's thread and the agent's main thread
// The socket sets it at once; the governor reads it synchronously before every motion command.
/*
 * The socket's thread answers `ESTOP` without waiting for the main thread (which may be busy for
 * tens of milliseconds under a flood). It writes the reason, then raises `requested` (Atomics); the
 * governor, on the main thread, `take`s a pending request before it decides on any motion command
 * (refusing that command and latching), and the socket actor takes it when the thread's message
 * arrives. A request is pending from the moment `request()` returns until the main thread took it:
 * the latch it becomes is then the governor's own, released only by a release like any other.
 *
 * Layout of the shared buffer: Int32 [0] requested, [1] taken, [2] reason length in bytes;
 * Float64 at byte 16: when the last request came (ms since the epoch); bytes 24.. the reason (UTF-8).
 */

const REASON_OFFSET = 24;
/** Longest reason kept, in bytes (the socket cuts a reason at 200 characters: at most 800 bytes). */
const REASON_BYTES = 800;

export interface EstopRequest {
  reason: string;
  at: number;
}

export class EstopGate {
  private readonly ints: Int32Array;
  private readonly when: Float64Array;
  private readonly text: Uint8Array;

  /** A new gate, or one over the buffer of a gate made in another thread. */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(REASON_OFFSET + REASON_BYTES)) {
    this.ints = new Int32Array(buffer, 0, 3);
    this.when = new Float64Array(buffer, 16, 1);
    this.text = new Uint8Array(buffer, REASON_OFFSET, REASON_BYTES);
  }

  /** The socket's side: latches. Motion is refused from the moment this returns. */
  request(reason: string, at = Date.now()): void {
    const bytes = new TextEncoder().encode(reason).subarray(0, REASON_BYTES);
    this.text.set(bytes);
    Atomics.store(this.ints, 2, bytes.length);
    this.when[0] = at;
    // Last, and sequentially consistent: a reader that sees the new count sees the reason written before it.
    Atomics.add(this.ints, 0, 1);
  }

  /** How many requests were made so far (the socket's thread compares it with the status it was last given). */
  requested(): number {
    return Atomics.load(this.ints, 0);
  }

  /** How many requests the main thread has taken (latched in the governor). */
  taken(): number {
    return Atomics.load(this.ints, 1);
  }

  /** A request is waiting for the main thread. */
  pending(): boolean {
    return this.requested() !== this.taken();
  }

  /** The main thread's side: the waiting request (the last one's reason), now taken; undefined when none waits. */
  take(): EstopRequest | undefined {
    const requested = this.requested();
    if (requested === this.taken()) return undefined;
    Atomics.store(this.ints, 1, requested);
    return this.last();
  }

  /** The last request's reason and time. */
  last(): EstopRequest {
    const length = Math.min(Atomics.load(this.ints, 2), REASON_BYTES);
    // Copied out of the shared memory first (TextDecoder does not read shared buffers).
    return { reason: new TextDecoder().decode(this.text.slice(0, length)), at: this.when[0] ?? 0 };
  }
}
