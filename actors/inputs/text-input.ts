// TextInput: typed lines from stdin, a FIFO or a local (unix) socket, as final text messages for the prompt.
import { createReadStream, existsSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { Observable, Subject, filter, firstValueFrom, map, share, takeUntil } from 'rxjs';
import type { InputContext, InputFactory, InputMessage, InputPlugin } from '../../src/cortex/input.js';
import { TextInputOptions } from '../../src/plugins/schemas/inputs.js';

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

/** Lines from clients of a unix socket server at `path` (removed on stop). */
function socketLines(path: string): Observable<string> {
  return new Observable<string>((sub) => {
    if (existsSync(path)) rmSync(path);
    const server: Server = createServer((conn) => {
      const rl = createInterface({ input: conn, crlfDelay: Infinity });
      rl.on('line', (line) => sub.next(line));
      conn.on('error', () => conn.destroy());
    });
    server.on('error', (err) => sub.error(err));
    server.listen(path);
    return () => {
      server.close();
      if (existsSync(path)) rmSync(path, { force: true });
    };
  });
}

export class TextInput implements InputPlugin<string> {
  readonly type = 'TextInput';
  readonly descriptor: string;
  private readonly options: TextInputOptions;
  private readonly stop$ = new Subject<void>();
  private readonly pushed = new Subject<string>();
  private readonly lines$: Observable<string>;
  private buffer: InputMessage[] = [];
  /** Lines dropped because the buffer was full between two ticks. */
  dropped = 0;

  constructor(options: TextInputOptions, ctx?: InputContext) {
    this.options = options;
    this.descriptor = options.descriptor;
    const source =
      options.source === 'stdin' ? linesOf(process.stdin) : options.source === 'fifo' ? fifoLines(options.path!) : socketLines(options.path!);
    const merged = new Observable<string>((sub) => {
      const a = source.subscribe({ next: (l) => sub.next(l), error: (e) => sub.error(e) });
      const b = this.pushed.subscribe((l) => sub.next(l));
      return () => {
        a.unsubscribe();
        b.unsubscribe();
      };
    });
    this.lines$ = merged.pipe(
      map((line) => line.trim().slice(0, options.max_line_length)),
      filter((line) => line.length > 0),
      map((line) => {
        const msg = this.rawToText(line);
        if (msg) this.remember(msg);
        return line;
      }),
      takeUntil(this.stop$),
      share(),
    );
    ctx?.signal.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** Feeds a line as if typed (the WebSim text box uses this). */
  push(line: string): void {
    this.pushed.next(line);
  }

  listen(): Observable<string> {
    return this.lines$;
  }

  async poll(signal?: AbortSignal): Promise<string | undefined> {
    const next = firstValueFrom(this.lines$, { defaultValue: undefined });
    if (!signal) return next;
    return Promise.race([next, new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true }))]);
  }

  rawToText(raw: string): InputMessage | undefined {
    const text = raw.trim();
    return text ? { timestamp: Date.now(), text, final: true } : undefined;
  }

  private remember(msg: InputMessage): void {
    this.buffer.push(msg);
    while (this.buffer.length > this.options.buffer_size) {
      this.buffer.shift();
      this.dropped++;
    }
  }

  formattedLatestBuffer(): string | undefined {
    if (this.buffer.length === 0) return undefined;
    const lines = this.buffer.map((m) => m.text);
    this.buffer = [];
    return `${this.descriptor}: ${lines.join('\n')}`;
  }

  async stop(): Promise<void> {
    this.stop$.next();
    this.stop$.complete();
    this.pushed.complete();
  }
}

/** The TextInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createTextInput: InputFactory = (config, ctx) => new TextInput(TextInputOptions.parse(config ?? {}), ctx);
