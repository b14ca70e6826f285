// espeak-ng processes started ahead and waiting for their text, shared by the local service's synthesis and the robot's local_tts connector.
import { type ChildProcess, spawn } from 'node:child_process';

/** espeak-ng's own output: 16-bit mono WAV at 22050 Hz, streamed (its header's sizes are placeholders). */
export const ESPEAK_RATE = 22050;
export const WAV_HEADER_BYTES = 44;
/** Voices and speeds kept warm at once; the least recently used beyond this is stopped. */
const WARM_KEYS = 4;

/** Arguments of an espeak-ng that reads its text on stdin and writes WAV to stdout. */
export const espeakArgs = (voice: string, wpm: number): string[] => ['--stdout', '-s', String(wpm), '-v', voice, '--stdin'];

export interface WarmEspeakOptions {
  /** Program to run (espeak-ng's arguments); default `espeak-ng` from PATH. */
  command?: string;
  /** What espeak-ng prints on stderr: ignored (default) or handed to `take`'s caller as a pipe. */
  stderr?: 'ignore' | 'pipe';
}

/**
 * espeak-ng processes started ahead, one per voice and speed: each has loaded its voice and waits for
 * its text on stdin, so a synthesis starts no program (about 30 ms less, more under load) and its
 * first audio comes a few ms after the text. A taken process is replaced at once. Idle ones do not
 * keep the process alive; `close()` stops them (their owner does when it stops).
 */
export class WarmEspeak {
  private readonly ready = new Map<string, ChildProcess>();
  private closed = false;
  /** The replacement of a taken process, started on the next turn of the event loop (see `take`). */
  private readonly refills = new Map<string, NodeJS.Immediate>();
  private readonly command: string;
  private readonly stderr: 'ignore' | 'pipe';

  constructor(opts: WarmEspeakOptions = {}) {
    this.command = opts.command ?? 'espeak-ng';
    this.stderr = opts.stderr ?? 'ignore';
  }

  /** Starts a process for `voice` at `wpm` now, if none waits, so even the first synthesis finds one. */
  prewarm(voice: string, wpm: number): void {
    const key = `${voice}@${wpm}`;
    if (this.closed || this.ready.has(key)) return;
    this.keep(key, this.start(voice, wpm, true));
  }

  /** A started espeak-ng for `voice` at `wpm`, to be given its text (stdin, then end) and read (stdout). */
  take(voice: string, wpm: number): ChildProcess {
    const key = `${voice}@${wpm}`;
    let child = this.ready.get(key);
    this.ready.delete(key);
    if (!child || child.exitCode !== null || child.signalCode !== null) child = this.start(voice, wpm, false);
    else WarmEspeak.hold(child, true);
    // The replacement starts on the next turn of the event loop, not in the caller's: a speak at start-up
    // (an on_entry message) then does not put a second process start before the agent's first tick;
    // text that comes later still finds a warm process.
    if (!this.closed && !this.refills.has(key))
      this.refills.set(
        key,
        setImmediate(() => {
          this.refills.delete(key);
          if (!this.closed && !this.ready.has(key)) this.keep(key, this.start(voice, wpm, true));
        }),
      );
    return child;
  }

  close(): void {
    this.closed = true;
    for (const refill of this.refills.values()) clearImmediate(refill);
    this.refills.clear();
    for (const child of this.ready.values()) {
      child.stdin?.destroy();
      child.kill();
    }
    this.ready.clear();
  }

  private keep(key: string, child: ChildProcess): void {
    this.ready.set(key, child);
    while (this.ready.size > WARM_KEYS) {
      const [oldest, old] = this.ready.entries().next().value as [string, ChildProcess];
      this.ready.delete(oldest);
      old.stdin?.destroy();
      old.kill();
    }
  }

  private start(voice: string, wpm: number, idle: boolean): ChildProcess {
    // In a process group of its own: Ctrl-C in a terminal signals the whole foreground group, and a
    // warm espeak-ng killed with cortexd would leave the on_shutdown goodbye without a voice. Its owner
    // stops it (close, or the abort of its synthesis); should cortexd die, its stdin closes and it exits.
    const child = spawn(this.command, espeakArgs(voice, wpm), { stdio: ['pipe', 'pipe', this.stderr], detached: true });
    child.on('error', () => undefined);
    child.stdin!.on('error', () => undefined);
    if (idle) WarmEspeak.hold(child, false);
    return child;
  }

  /** Whether the child (and its pipes) keep the event loop alive: not while it only waits. */
  private static hold(child: ChildProcess, on: boolean): void {
    for (const h of [child, child.stdin, child.stdout, child.stderr] as Array<{ ref?: () => void; unref?: () => void } | null>) on ? h?.ref?.() : h?.unref?.();
  }
}
