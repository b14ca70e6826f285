// Offline speech recognition with pocketsphinx: a warm decoder per utterance fed while the person speaks, and one-shot decodes for partials
// The warm decoder is fed through a FIFO; it decodes with a JSGF command grammar or the open English model.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_COMMANDS, jsgfGrammar } from './commands.js';

const execFileP = promisify(execFile);

export interface RecognizerOptions {
  /** Command phrases (compiled to JSGF), or `open` for the full en-us language model. Default DEFAULT_COMMANDS. */
  grammar?: readonly string[] | 'open';
  /** Program to run; default `pocketsphinx_continuous` from PATH. */
  program?: string;
  /**
   * A process slot for a live decoder (warm or decoding), taken without waiting: its release, or
   * undefined when none is free (then no live decoder starts and `begin()` answers undefined).
   * Default: always one (unbounded; the service passes its recognizer pool's `tryHold`).
   */
  slot?: () => (() => void) | undefined;
}

/** The lines a decoder printed, as one text. */
const joinLines = (out: string): string =>
  out
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');

/** A decoder process reading a FIFO. */
interface DecoderProcess {
  child: ChildProcess;
  /** Our end of the FIFO (non-blocking), open once the decoder has opened its end; rejects if it died first. */
  writer: Promise<number>;
  /** Closes our end once (the decoder's end of input); also done when the decoder exits. */
  closeWriter: () => void;
  /** Its text, once its input ended and it exited. */
  out: Promise<string>;
}

/**
 * One utterance decoded while it is spoken: a `pocketsphinx_continuous` started ahead (warm: models
 * loaded, waiting on its FIFO) gets each piece of audio as it arrives; `finish()` ends its input and
 * resolves with what it printed, so the final costs the last piece and the end of the search, not a
 * decode of the whole utterance. Writes never block: the FIFO is non-blocking and what does not fit
 * waits here (at most the utterance, which the session bounds) and is retried shortly.
 */
export class LiveUtterance {
  private readonly pending: Buffer[] = [];
  private fd: number | undefined;
  private child: ChildProcess | undefined;
  private ended = false;
  private aborted = false;
  private exited = false;
  private retry: NodeJS.Timeout | undefined;
  private closeWriter: (() => void) | undefined;
  private readonly result: Promise<string>;

  constructor(process: Promise<DecoderProcess>) {
    this.result = process.then((p) => {
      this.child = p.child;
      this.closeWriter = p.closeWriter;
      void p.out.then(
        () => this.stop(),
        () => this.stop(),
      );
      if (this.aborted) p.child.kill('SIGKILL');
      void p.writer.then(
        (fd) => {
          this.fd = fd;
          this.pump();
        },
        () => undefined,
      );
      return p.out;
    });
    this.result.catch(() => undefined);
  }

  /** Feeds 16 kHz s16le mono PCM, in order. */
  write(pcm16k: Buffer): void {
    if (this.ended || pcm16k.length === 0) return;
    this.pending.push(pcm16k);
    this.pump();
  }

  /** Ends the utterance; resolves with its text ('' when nothing of the grammar was heard). */
  finish(): Promise<string> {
    if (!this.ended) {
      this.ended = true;
      this.pump();
    }
    return this.result;
  }

  /** Stops the decoder; its result rejects. */
  abort(): void {
    this.ended = this.aborted = true;
    this.pending.length = 0;
    this.child?.kill('SIGKILL');
    this.stop();
  }

  private stop(): void {
    this.exited = true;
    clearTimeout(this.retry);
    this.closeFd();
  }

  private pump(): void {
    if (this.fd === undefined || this.fd < 0 || this.exited) return;
    clearTimeout(this.retry);
    while (this.pending.length) {
      const buf = this.pending[0]!;
      let n: number;
      try {
        n = writeSync(this.fd, buf);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          // The decoder is behind (its pipe is full): try again shortly.
          this.retry = setTimeout(() => this.pump(), 5);
          return;
        }
        this.pending.length = 0;
        this.child?.kill('SIGKILL');
        return;
      }
      if (n < buf.length) this.pending[0] = buf.subarray(n);
      else this.pending.shift();
    }
    // All written: closing our end is the decoder's end of input.
    if (this.ended) this.closeFd();
  }

  private closeFd(): void {
    if (this.fd === undefined || this.fd < 0) return;
    this.closeWriter?.();
    this.fd = -1;
  }
}

/**
 * One recognizer per session, owning a private temporary directory. Utterances are decoded live
 * (`begin()`): one decoder process is kept warm ahead, so the start of an utterance starts no program;
 * it reads a FIFO (the program cannot read a socket-backed stdin, which is what Node gives a child).
 * `decode()` runs a short-lived process on a whole buffer (partials). An utterance outside the
 * grammar decodes to the empty string.
 */
export class PocketsphinxRecognizer {
  private readonly dir: string;
  private readonly args: string[];
  private readonly program: string;
  private seq = 0;
  private warm: Promise<DecoderProcess> | undefined;
  private readonly live = new Set<ChildProcess>();
  private closed = false;
  private readonly writes = new Set<Promise<unknown>>();
  private readonly slot: () => (() => void) | undefined;

  constructor(opts: RecognizerOptions = {}) {
    this.program = opts.program ?? 'pocketsphinx_continuous';
    this.slot = opts.slot ?? (() => () => undefined);
    // Dither (seeded, so a decode is repeatable): digital silence (the robot's end-of-utterance padding, zero pre-roll) otherwise upsets the live decoder's feature normalisation.
    this.args = ['-logfn', '/dev/null', '-dither', 'yes', '-seed', '1'];
    this.dir = mkdtempSync(join(tmpdir(), 'cortexd-asr-'));
    if (opts.grammar !== 'open') {
      const file = join(this.dir, 'commands.gram');
      writeFileSync(file, jsgfGrammar(opts.grammar ?? DEFAULT_COMMANDS));
      this.args.push('-jsgf', file);
    }
  }

  /** Starts the next decoder now if a slot is free (models load while nobody waits); `begin()` takes it. */
  prewarm(): void {
    if (this.closed || this.warm) return;
    const release = this.slot();
    if (!release) return;
    this.warm = this.startDecoder(release);
    this.warm.catch(() => undefined);
  }

  /**
   * A live utterance on the warm decoder (started now if none is and a slot is free), or undefined
   * when no slot is free (the caller decodes the whole utterance another way). The next decoder warms
   * at once if a slot allows.
   */
  begin(): LiveUtterance | undefined {
    this.prewarm();
    const proc = this.warm;
    if (!proc) return undefined;
    this.warm = undefined;
    this.prewarm();
    return new LiveUtterance(proc);
  }

  /** A decoder process on a new FIFO, holding its slot (`release`) until it exits or fails to start. */
  private async startDecoder(release: () => void): Promise<DecoderProcess> {
    const fifo = join(this.dir, `live-${this.seq++}.fifo`);
    try {
      if (this.closed) throw new Error('recognizer closed');
      await this.creating(execFileP('mkfifo', ['-m', '600', fifo]));
      if (this.closed) throw new Error('recognizer closed');
    } catch (err) {
      release();
      throw err;
    }
    const child = spawn(this.program, ['-infile', fifo, ...this.args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.live.add(child);
    child.on('error', release);
    child.on('close', release);
    let gone = false;
    // A non-blocking open for writing succeeds once the decoder has opened its end (ENXIO before):
    // tried every few ms while it loads, so no thread waits on the FIFO and nothing is lost.
    const writer = new Promise<number>((resolve, reject) => {
      const attempt = (): void => {
        if (gone) return reject(new Error('decoder exited before reading'));
        try {
          resolve(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENXIO') return reject(err);
          setTimeout(attempt, 5);
        }
      };
      attempt();
    });
    writer.catch(() => undefined);
    let writerClosed = false;
    const closeWriter = (): void => {
      if (writerClosed) return;
      writerClosed = true;
      void writer.then((fd) => closeSync(fd)).catch(() => undefined);
    };
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-2000)));
    const result = new Promise<string>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => {
        this.live.delete(child);
        gone = true;
        closeWriter();
        void unlink(fifo).catch(() => undefined);
        if (code === 0) resolve(joinLines(out));
        else reject(new Error(`pocketsphinx ${signal ? `was killed (${signal})` : `exited with ${code}`}${err ? `: ${err.trim().split('\n').pop()}` : ''}`));
      });
    });
    result.catch(() => undefined);
    return { child, writer, out: result, closeWriter };
  }

  /** Text of one utterance (16 kHz s16le mono). Rejects on process failure; killed by `signal`. */
  async decode(pcm16k: Buffer, signal: AbortSignal): Promise<string> {
    if (this.closed) throw new Error('recognizer closed');
    const file = join(this.dir, `utt-${this.seq++}.raw`);
    // Trailing silence lets pocketsphinx's own endpointer close the utterance cleanly.
    await this.creating(writeFile(file, Buffer.concat([pcm16k, Buffer.alloc(16000 * 2 * 0.3)])));
    try {
      if (this.closed) throw new Error('recognizer closed');
      return await new Promise<string>((resolve, reject) => {
        const child = spawn(this.program, ['-infile', file, ...this.args], { stdio: ['ignore', 'pipe', 'pipe'], signal });
        let out = '';
        let err = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d.slice(0, 2000)));
        // A process that started is waited for until it is gone (an abort kills it), so its pool slot frees only then.
        let failed: Error | undefined;
        child.on('error', (e) => {
          if (child.pid === undefined) reject(e);
          else failed = e;
        });
        child.on('close', (code) => {
          if (failed) reject(failed);
          else if (code === 0) resolve(joinLines(out));
          else reject(new Error(`pocketsphinx exited with ${code}${err ? `: ${err.trim().split('\n').pop()}` : ''}`));
        });
      });
    } finally {
      await unlink(file).catch(() => undefined);
    }
  }

  /** `op`, a write into the directory, counted until it settles so that `close` removes the directory after it. */
  private creating<T>(op: Promise<T>): Promise<T> {
    this.writes.add(op);
    const done = (): void => void this.writes.delete(op);
    op.then(done, done);
    return op;
  }

  /**
   * Stops the warm decoder and every live one, and removes the directory once the writes into it
   * in flight have settled (a FIFO or an utterance file made during a recursive remove would fail
   * it with ENOTEMPTY). Never throws: it runs in a socket's close handler.
   */
  close(): void {
    this.closed = true;
    for (const child of this.live) child.kill('SIGKILL');
    void this.warm?.then(
      (p) => p.child.kill('SIGKILL'),
      () => undefined,
    );
    this.warm = undefined;
    void Promise.allSettled([...this.writes])
      .then(() => rm(this.dir, { recursive: true, force: true, maxRetries: 3 }))
      .catch(() => undefined);
  }
}

/** Trailing silence worth feeding a live decoder after the last sound, in bytes of 16 kHz s16le (100 ms). */
export const LIVE_TAIL_BYTES = 3200;

/** `pcm` without trailing digital silence beyond `keepBytes` (the robot's end-of-utterance padding is zeros). */
export function trimTrailingZeros(pcm: Buffer, keepBytes = LIVE_TAIL_BYTES): Buffer {
  let end = pcm.length - (pcm.length % 2);
  while (end >= 2 && pcm[end - 1] === 0 && pcm[end - 2] === 0) end -= 2;
  return pcm.subarray(0, Math.min(pcm.length - (pcm.length % 2), end + keepBytes));
}
