// TextInput: typed lines from stdin, a FIFO or a local (unix) socket, as final text messages for the prompt.
import { createReadStream, existsSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { Observable, Subject, filter, map, merge, tap } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { TextInputOptions } from '../../src/plugins/schemas/inputs.js';
import { BufferedInput } from './buffered-input.js';

export { TextInputOptions };

/** Lines of a readable stream, ending when it ends. */
function linesOf(stream: NodeJS.ReadableStream): Observable<string> {
  return new Observable<string>((sub) => {
    const rl = createInterface({ input: stream, crlfDelay: Infinity });
    rl.on('line', (line) => sub.next(line));
    rl.on('close', () => sub.complete());
    return () => rl.close();
  });
}

/** Lines from a FIFO: reopened after each writer closes, so `echo hi > fifo` can be repeated. */
function fifoLines(path: string): Observable<string> {
  return new Observable<string>((sub) => {
    let stopped = false;
    let current: ReturnType<typeof createReadStream> | undefined;
    const open = () => {
      if (stopped) return;
      current = createReadStream(path, { encoding: 'utf8' });
      const rl = createInterface({ input: current, crlfDelay: Infinity });
      rl.on('line', (line) => sub.next(line));
      current.on('error', (err) => sub.error(err));
      current.on('end', () => setImmediate(open));
    };
    open();
    return () => {
      stopped = true;
      current?.destroy();
    };
  });
}

/**
 * The server of each socket path, until its close is done. Closing a unix socket server unlinks its
 * path when the close completes (libuv), which would delete the socket of a newer server bound to the
 * same path meanwhile (two modes that both listen there, one stopping as the other starts, in either
 * order): a new server binds only once the previous one at that path has closed.
 */
const holders = new Map<string, Promise<void>>();

/** Lines from clients of a unix socket server at `path` (removed on stop). */
function socketLines(path: string): Observable<string> {
  return new Observable<string>((sub) => {
    let server: Server | undefined;
    let stopped = false;
    const conns = new Set<import('node:net').Socket>();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const previous = holders.get(path) ?? Promise.resolve();
    holders.set(path, held);
    const open = () => {
      if (stopped) return release();
      if (existsSync(path)) rmSync(path);
      server = createServer((conn) => {
        conns.add(conn);
        const rl = createInterface({ input: conn, crlfDelay: Infinity });
        rl.on('line', (line) => sub.next(line));
        conn.on('error', () => conn.destroy());
        conn.on('close', () => conns.delete(conn));
      });
      server.on('error', (err) => sub.error(err));
      server.listen(path);
    };
    void previous.then(open);
    return () => {
      stopped = true;
      void held.then(() => holders.get(path) === held && holders.delete(path));
      const s = server;
      if (!s) return;
      for (const c of conns) c.destroy();
      s.close(() => release());
    };
  });
}

/**
 * Typed lines as final messages (each wakes the loop): from its source, and from the runtime's text
 * boxes (the terminal, WebSim) through the "accepts typed text" capability, `acceptText`. The buffer
 * keeps every line since the last tick (`buffer_size` at most) as one `Descriptor: ...` block. When
 * stdin ends (Ctrl-D) the input says so once and keeps taking text from the text boxes.
 */
export class TextInput extends BufferedInput<string> {
  private readonly pushed = new Subject<string>();
  /** Lines refused because they were longer than `max_line_length`. */
  refused = 0;

  constructor(
    private readonly text: TextInputOptions,
    ctx?: Pick<InputContext, 'logger' | 'signal'>,
  ) {
    super({
      type: 'TextInput',
      descriptor: text.descriptor,
      bufferSize: text.buffer_size,
      policy: 'all',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
  }

  protected source(): Observable<string> {
    const o = this.text;
    const lines =
      o.source === 'stdin'
        ? linesOf(process.stdin).pipe(tap({ complete: () => this.logger?.warn('typed input ended (stdin closed); text from WebSim still reaches the agent') }))
        : o.source === 'fifo'
          ? fifoLines(o.path!)
          : socketLines(o.path!);
    return merge(lines, this.pushed).pipe(
      map((line) => line.trim()),
      filter((line) => line.length > 0 && this.withinCap(line)),
    );
  }

  /**
   * The per-line cap: a line longer than `max_line_length` is refused whole (never cut to a different
   * sentence), said in the log the first time and every 100th after, with the count. The inbox behind
   * it is the buffer (`buffer_size` lines between ticks, the oldest dropped and counted).
   */
  private withinCap(line: string): boolean {
    const max = this.text.max_line_length;
    if (line.length <= max) return true;
    this.refused += 1;
    if (this.refused === 1 || this.refused % 100 === 0) {
      this.logger?.warn(`typed line refused: ${line.length} characters, at most ${max} (max_line_length); ${this.refused} refused so far`);
    }
    return false;
  }

  /** Takes a line as if typed at the source (the terminal's and WebSim's text box). */
  acceptText(line: string): void {
    this.pushed.next(line);
  }

  protected toMessage(raw: string): InputMessage | undefined {
    const text = raw.trim();
    return text ? { timestamp: Date.now(), text, final: true } : undefined;
  }

  protected override format(messages: InputMessage[]): string {
    return `${this.descriptor}: ${messages.map((m) => m.text).join('\n')}`;
  }

  protected override async release(): Promise<void> {
    this.pushed.complete();
  }
}

/** The TextInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createTextInput: InputFactory = (config, ctx) => new TextInput(TextInputOptions.parse(config ?? {}), ctx);
