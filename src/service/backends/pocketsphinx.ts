// Offline speech recognition with pocketsphinx: decodes one utterance of 16 kHz s16le PCM with a JSGF command grammar or the open English model.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_COMMANDS, jsgfGrammar } from './commands.js';

export interface RecognizerOptions {
  /** Command phrases (compiled to JSGF), or `open` for the full en-us language model. Default DEFAULT_COMMANDS. */
  grammar?: readonly string[] | 'open';
  /** Program to run; default `pocketsphinx_continuous` from PATH. */
  program?: string;
}

/**
 * One recognizer per session, owning a private temporary directory. Each decode writes the utterance
 * to a raw file there and runs `pocketsphinx_continuous -infile <file>` on it (a short-lived process,
 * so a hung decode never blocks the next; the program cannot read a socket-backed stdin) and joins
 * the lines it prints. An utterance outside the grammar decodes to the empty string.
 */
export class PocketsphinxRecognizer {
  private readonly dir: string;
  private readonly args: string[];
  private readonly program: string;
  private seq = 0;

  constructor(opts: RecognizerOptions = {}) {
    this.program = opts.program ?? 'pocketsphinx_continuous';
    this.args = ['-logfn', '/dev/null'];
    this.dir = mkdtempSync(join(tmpdir(), 'cortexd-asr-'));
    if (opts.grammar !== 'open') {
      const file = join(this.dir, 'commands.gram');
      writeFileSync(file, jsgfGrammar(opts.grammar ?? DEFAULT_COMMANDS));
      this.args.push('-jsgf', file);
    }
  }

  /** Text of one utterance (16 kHz s16le mono). Rejects on process failure; killed by `signal`. */
  async decode(pcm16k: Buffer, signal: AbortSignal): Promise<string> {
    const file = join(this.dir, `utt-${this.seq++}.raw`);
    // Trailing silence lets pocketsphinx's own endpointer close the utterance cleanly.
    await writeFile(file, Buffer.concat([pcm16k, Buffer.alloc(16000 * 2 * 0.3)]));
    try {
      return await new Promise<string>((resolve, reject) => {
        const child = spawn(this.program, ['-infile', file, ...this.args], { stdio: ['ignore', 'pipe', 'pipe'], signal });
        let out = '';
        let err = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d.slice(0, 2000)));
        child.on('error', (e) => reject(e));
        child.on('close', (code) => {
          if (code === 0)
            resolve(
              out
                .split('\n')
                .map((l) => l.trim())
                .filter(Boolean)
                .join(' '),
            );
          else reject(new Error(`pocketsphinx exited with ${code}${err ? `: ${err.trim().split('\n').pop()}` : ''}`));
        });
      });
    } finally {
      await unlink(file).catch(() => undefined);
    }
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
