// The terminal view of `cortexd run`: one readable line per thing a person watching the robot cares about.
import { readFileSync } from 'node:fs';
import type { Subscription } from 'rxjs';
import type { AgentBus, AgentEvent } from '../src/cortex/events.js';
import { colorAllowed } from '../src/log.js';
import { redact } from '../src/redact.js';
import { Repeats, renderParts, shapeOf, type Part, type StartFacts, type Style } from './view-parts.js';
import { StreamSummary, type StreamLine } from './view-streams.js';
import { oneLine } from '../src/device-output.js';

export { replayFacts, speechFacts, type StartFacts } from './view-parts.js';

export interface ViewOptions {
  /** Where lines go (default stdout). */
  write?: (text: string) => void;
  /** Colours (default: when stdout is a TTY and NO_COLOR is unset or empty). */
  color?: boolean;
  /** What the start lines say (display names, where speech goes, the restored mode). */
  facts?: Partial<StartFacts>;
  /** Identical warnings and errors are shown once per this long, then summarised (default 5 min). */
  repeatWindowMs?: number;
  /** A repeated failure not seen for this long has ended: its summary is printed then (default 60 s). */
  quietMs?: number;
}

const time = (at: number): string => new Date(at).toTimeString().slice(0, 8);

function preview(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1 && typeof entries[0]![1] === 'string') return entries[0]![1] as string;
  }
  return JSON.stringify(value);
}

const STREAM_STYLE: Record<StreamLine['level'], Style | undefined> = { info: 'dim', warn: 'yellow', bad: 'red', ok: 'green' };
const LOG_LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };

/**
 * Renders the bus: the start (mode, and whether mode memory chose it; where speech goes; the WebSim
 * address), every switch with its reason, what the robot heard (finals; other inputs only when what
 * they say changed shape), what it says, each model answer (tool calls, latency, CU; an answer that
 * is not spoken says so), console action output, failures (a hook cut short by a mode switch is
 * "cancelled", not failed), socket trouble as summaries, and the stop. Identical warnings and errors
 * are printed once per `repeatWindowMs`, then counted. Text is escaped before it is coloured, so a
 * terminal sees colour codes and a newline inside a transcript stays on its line.
 */
export class TerminalView {
  private readonly write: (text: string) => void;
  private readonly color: boolean;
  private facts: Partial<StartFacts>;
  private speaking: Set<string> | undefined;
  private readonly repeats: Repeats;
  private readonly streams = new StreamSummary();
  /** Inputs with a speech-recognition socket: their non-final messages are partial transcripts. */
  private readonly asrInputs = new Set<string>();
  /** The shape of the last non-final message shown per input. */
  private readonly shownShape = new Map<string, string>();
  private sub: Subscription | undefined;
  private logBuffer = '';
  /** The running mode (from the start and each switch): which microphones replay a recording now. */
  private currentMode: string | undefined;
  /** Modes whose replayed microphones were said already. */
  private readonly replaySaid = new Set<string>();
  private readonly quietMs: number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(options: ViewOptions = {}) {
    this.write = options.write ?? ((t) => process.stdout.write(t));
    this.color = options.color ?? (Boolean(process.stdout.isTTY) && colorAllowed());
    this.facts = options.facts ?? {};
    this.speaking = this.facts.speakingModes ? new Set(this.facts.speakingModes) : undefined;
    this.repeats = new Repeats(options.repeatWindowMs ?? 5 * 60_000);
    this.quietMs = options.quietMs ?? 60_000;
  }

  /** Sets what the start lines say, once the configuration is loaded (the view may show log lines before). */
  configure(facts: Partial<StartFacts>): this {
    this.facts = facts;
    this.speaking = facts.speakingModes ? new Set(facts.speakingModes) : undefined;
    return this;
  }

  attach(bus: AgentBus): this {
    this.sub = bus.events$.subscribe((e) => this.render(e));
    this.sweeper = setInterval(() => this.sweep(Date.now()), Math.min(5000, this.quietMs)).unref();
    return this;
  }

  detach(): void {
    this.sub?.unsubscribe();
    clearInterval(this.sweeper);
  }

  /** Ends the summaries of repeated failures that stopped coming: one line each, when they stopped, not at exit. */
  sweep(now: number): void {
    for (const r of this.repeats.ended(now, this.quietMs)) this.line(now, { style: 'dim', text: heldBack(r, 'ended') });
  }

  /** Output of `console` connectors (`[speak] Hello!`): what the robot does, in bold. */
  consoleLine(line: string): void {
    this.line(Date.now(), '  ', { style: 'bold', text: line });
  }

  /**
   * A pino destination that shows the process log in the view: warnings and errors as lines, each
   * kind (its message with numbers left out) once per repeat window. Lines that are not JSON are
   * shown as they are.
   */
  logDestination(): { write: (chunk: string) => void } {
    return {
      write: (chunk: string) => {
        this.logBuffer += chunk;
        let nl: number;
        while ((nl = this.logBuffer.indexOf('\n')) >= 0) {
          const line = this.logBuffer.slice(0, nl);
          this.logBuffer = this.logBuffer.slice(nl + 1);
          if (line.trim()) this.logLine(line);
        }
      },
    };
  }

  private logLine(line: string): void {
    let entry: {
      level?: number;
      time?: number;
      msg?: string;
      mode?: string;
      safety?: string;
      action?: string;
      hook?: string;
      input?: string;
      err?: unknown;
      error?: unknown;
    };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return this.line(Date.now(), line);
    }
    // The safety governor's log lines repeat its `safety` events, which the view prints itself.
    if (entry.safety !== undefined) return;
    // The speaker's switch to files when the start already said there is no sound card: not news.
    if ((entry as { speaker_fallback?: unknown }).speaker_fallback === true && this.facts.noSoundCard) return;
    // A failure of an action, hook or input is also its bus event, which the view prints: one line, not two.
    const failure = entry.err !== undefined || entry.error !== undefined || / failed\b/.test(entry.msg ?? '');
    if (failure && (entry.action !== undefined || entry.hook !== undefined || entry.input !== undefined)) return;
    // Debug lines (`--verbose`) carry what a device printed, a line of its own each.
    const output = (entry as { device_output?: unknown }).device_output;
    if (typeof output === 'string') {
      for (const l of output.split(/\r?\n/).filter((x) => x.trim())) this.line(entry.time ?? Date.now(), { style: 'dim', text: `  | ${l}` });
      return;
    }
    const level = LOG_LEVELS[entry.level ?? 30] ?? 'log';
    const at = typeof entry.time === 'number' ? entry.time : Date.now();
    const msg = entry.msg ?? '';
    const style: Style = (entry.level ?? 30) >= 50 ? 'red' : (entry.level ?? 30) >= 40 ? 'yellow' : 'dim';
    this.once(`log:${level}:${shapeOf(msg)}`, at, [{ style, text: `${level}${entry.mode ? ` (${entry.mode})` : ''}: ${oneLine(msg, 240)}` }]);
  }

  private line(at: number, ...parts: Part[]): void {
    this.write(`${renderParts([{ style: 'dim', text: time(at) }, ' '], this.color)}${renderParts(parts, this.color)}\n`);
  }

  /** Prints a line whose kind was not printed within the repeat window; a kind coming back says how often it was held back. */
  private once(key: string, at: number, parts: Part[]): void {
    const { print, summary } = this.repeats.offer(key, at);
    if (!print) return;
    this.line(at, ...parts, ...(summary ? [{ style: 'dim' as const, text: ` (and ${summary} more like it before)` }] : []));
  }

  private mode(name: string): string {
    const display = this.facts.displayNames?.[name];
    return display && display !== name ? `${name} (${display})` : name;
  }

  private canSpeak(mode: string): boolean {
    return this.speaking === undefined || this.speaking.has(mode);
  }

  private started(e: Extract<AgentEvent, { type: 'agent.started' }>): void {
    const f = this.facts;
    const restored = f.restoredMode !== undefined && f.restoredMode === e.mode && f.restoredMode !== f.defaultMode;
    this.line(e.at, { style: 'cyan', text: `cortexd: agent ${e.config} starting in mode ${this.mode(e.mode)}${e.service ? `, service ${e.service}` : ''}` });
    if (restored) {
      const fresh = f.freshCommand ? `; \`${f.freshCommand}\` starts in ${this.mode(f.defaultMode!)}` : '';
      this.line(e.at, { style: 'cyan', text: `  mode ${e.mode} was restored from the last run (mode memory)${fresh}` });
    }
    if (f.speech?.length)
      this.line(e.at, { style: 'dim', text: `  speech goes to ${f.speech.join('; ')}${f.hearHint ? `; hear the newest: ${f.hearHint}` : ''}` });
    if (f.typed !== false) this.line(e.at, { style: 'dim', text: '  type a line and press Enter to talk to it; Ctrl-C stops' });
    else this.line(e.at, { style: 'dim', text: '  Ctrl-C stops' });
    this.entered(e.mode, e.at);
  }

  /** A mode started: its replayed microphones are said once per run, so what they "hear" is not taken for a person. */
  private entered(mode: string, at: number): void {
    this.currentMode = mode;
    const replayed = this.facts.replayedMicrophones?.[mode];
    if (!replayed || this.replaySaid.has(mode)) return;
    this.replaySaid.add(mode);
    for (const [input, file] of Object.entries(replayed))
      this.line(at, { style: 'yellow', text: `  ${input} hears a recording (${file}, replayed), not a microphone: what it "hears" is that file` });
  }

  /** The recording an input of the running mode replays, if it does. */
  private replayedBy(input: string): string | undefined {
    return this.currentMode === undefined ? undefined : this.facts.replayedMicrophones?.[this.currentMode]?.[input];
  }

  // long: one case per bus event type, each the line or lines the view prints for it.
  render(e: AgentEvent): void {
    switch (e.type) {
      case 'agent.started':
        return this.started(e);
      case 'simulator.ready': {
        // A generated token: the address with it in the fragment (the person at this terminal is the
        // service user; the bus only said where the 0600 file is, never the token).
        const withToken = e.token_file ? tokenAddress(e.url, e.token_file) : undefined;
        if (withToken) {
          this.line(e.at, { style: 'cyan', text: `${e.simulator}: ${withToken}` }, { style: 'dim', text: ' (open it in a browser to watch and act)' });
          return this.line(e.at, {
            style: 'dim',
            text: `  without the #token part the page only watches and latches the e-stop; the token is kept in ${e.token_file}`,
          });
        }
        return this.line(
          e.at,
          { style: 'cyan', text: `${e.simulator}: ${e.url}` },
          {
            style: 'dim',
            text: e.token_required
              ? ' (open it once with ?token=<your token>)'
              : e.token_file
                ? ` (watch only: the token to act is in ${e.token_file})`
                : ' (open it in a browser)',
          },
        );
      }
      case 'mode.changed': {
        // A reason that already starts with its trigger (`manual: from WebSim`) is not prefixed twice.
        const why = e.reason === e.trigger || e.reason.startsWith(`${e.trigger}:`) ? e.reason : `${e.trigger}: ${e.reason}`;
        this.line(e.at, { style: 'magenta', text: `mode ${this.mode(e.from)} -> ${this.mode(e.to)} (${why})` });
        return this.entered(e.to, e.at);
      }
      case 'mode.refused':
        return this.line(e.at, { style: 'yellow', text: `switch to ${e.requested} refused: ${e.reason}` });
      case 'input':
        return this.input(e);
      case 'recall':
        return this.recall(e);
      case 'model.answer':
        return this.answer(e);
      case 'model.error':
        return this.once(`model.error:${shapeOf(e.error)}`, e.at, [{ style: 'red', text: `model failed: ${oneLine(e.error, 240)}` }]);
      case 'action':
        return this.action(e);
      case 'hook':
        return this.hook(e);
      case 'mcp':
        if (e.state !== 'call') this.line(e.at, `tool server ${e.server}: ${e.state}${e.detail ? ` (${e.detail})` : ''}`);
        return;
      case 'stream': {
        if (e.kind === 'asr') this.asrInputs.add(e.input);
        const out = this.streams.offer(e);
        if (out) this.line(e.at, STREAM_STYLE[out.level] ? { style: STREAM_STYLE[out.level]!, text: out.text } : out.text);
        return;
      }
      case 'error':
        return this.once(`error:${e.source}:${shapeOf(e.message)}`, e.at, [{ style: 'red', text: `${e.source}: ${oneLine(e.message, 240)}` }]);
      case 'safety':
        // A dead-man stop after every command would fill the screen: stops of one cause are held back like warnings.
        if (e.kind === 'stop') return this.once(`safety:stop:${e.cause ?? ''}`, e.at, [safetyLine(e)]);
        this.line(e.at, safetyLine(e));
        return;
      case 'fleet':
        if (e.state === 'connected') this.line(e.at, { style: 'cyan', text: `fleet: ${e.robot} online at ${e.broker}` });
        else if (e.state === 'failed') this.line(e.at, { style: 'red', text: `fleet: ${e.reason ?? 'failed'}` });
        else if (e.state === 'backingOff' && e.attempt === 2) this.line(e.at, { style: 'yellow', text: `fleet: ${e.reason ?? 'disconnected'}; retrying` });
        return;
      case 'fleet.command':
        this.line(e.at, { style: e.ok ? 'cyan' : 'yellow', text: `fleet command ${e.command} ${e.ok ? 'done' : `refused: ${e.reason ?? ''}`}` });
        return;
      case 'agent.stopping':
        for (const s of this.streams.flush(e.at)) this.line(e.at, { style: 'yellow', text: s.text });
        for (const r of this.repeats.flush()) this.line(e.at, { style: 'dim', text: heldBack(r, 'still') });
        return this.line(e.at, { style: 'cyan', text: `stopping (${e.reason})...` });
      case 'agent.stopped':
        return this.line(e.at, { style: 'cyan', text: `stopped (exit ${e.code})` });
      default:
        return;
    }
  }

  private input(e: Extract<AgentEvent, { type: 'input' }>): void {
    if (e.final) {
      this.shownShape.delete(e.input);
      const recording = this.replayedBy(e.input);
      return this.line(
        e.at,
        { style: 'green', text: recording ? `heard (${e.input}, from the recording ${recording}):` : `heard (${e.input}):` },
        ` ${e.text}`,
      );
    }
    // Partial transcripts are not what was heard; the final follows.
    if (this.asrInputs.has(e.input)) return;
    // Other running descriptions (vision, sensors) are shown when they say something new, not when a number moves.
    const shape = shapeOf(e.text);
    if (this.shownShape.get(e.input) === shape) return;
    this.shownShape.set(e.input, shape);
    this.line(e.at, { style: 'green', text: `${e.input}:` }, ` ${e.text}`);
  }

  /** The passages and memories a turn was given: source and score each (a turn given none says nothing). */
  private recall(e: Extract<AgentEvent, { type: 'recall' }>): void {
    if (e.note) this.line(e.at, { style: 'magenta', text: 'memory:' }, ` ${oneLine(e.note.replace(/^MEMORY: /, ''), 200)}`);
    if (e.used.length === 0) return;
    const items = e.used.map((u) =>
      u.kind === 'knowledge'
        ? `${u.source} ${u.score.toFixed(2)}`
        : `${u.kind}${u.person ? ` of ${u.person}` : ''} "${oneLine(u.text, 40)}" ${u.score.toFixed(2)}`,
    );
    this.line(e.at, { style: 'magenta', text: 'recalled:' }, ` ${items.join('; ')}`);
  }

  private answer(e: Extract<AgentEvent, { type: 'model.answer' }>): void {
    const calls = e.tool_calls.map((c) => `${c.name}(${preview(c.arguments)})`).join(', ');
    const cost = e.cost_cu !== undefined ? `, ${e.cost_cu} CU` : '';
    const head: Part = { style: 'blue', text: `model ${e.model}` };
    const spokeByCall = e.tool_calls.some((c) => c.name === 'speak');
    const text = e.text?.trim();
    const parts: Part[] = [head, ` ${e.latency_ms} ms${cost}:`];
    if (text) parts.push(` "${text}"`);
    if (calls) parts.push(` ${calls}`);
    if (!text && !calls) parts.push({ style: 'dim', text: ' (nothing to do)' });
    if (text && !spokeByCall && !this.canSpeak(e.mode)) parts.push({ style: 'yellow', text: ` (not spoken: mode ${e.mode} has no speak action)` });
    this.line(e.at, ...parts);
  }

  private action(e: Extract<AgentEvent, { type: 'action' }>): void {
    // Speech through a console connector is printed by the connector itself.
    if (e.name === 'speak' && e.connector !== 'console') {
      if (e.state === 'running') return this.line(e.at, '  ', { style: 'bold', text: `says "${preview(e.value)}"` });
      if (e.state === 'interrupted' && e.error === 'interrupted') return this.line(e.at, '  ', { style: 'dim', text: '(speech interrupted)' });
    }
    // Commands cut off because their mode was left are the switch's doing, not a failure.
    if ((e.state === 'failed' || e.state === 'dropped') && e.error !== 'action stopped') {
      this.once(`action:${e.label}:${e.state}:${shapeOf(e.error ?? '')}`, e.at, [
        { style: 'yellow', text: `${e.label} ${e.state}: ${oneLine(e.error ?? '', 240)}` },
      ]);
    }
  }

  private hook(e: Extract<AgentEvent, { type: 'hook' }>): void {
    const what = `${e.hook_type} ${e.handler_type} hook of ${e.mode}`;
    if (e.cancelled) return this.line(e.at, { style: 'dim', text: `${what} cancelled${e.error ? `: ${e.error.replace(/^cancelled: /, '')}` : ''}` });
    // A spoken message cut off by someone speaking over it (barge-in) did what it should: "(speech interrupted)" said so.
    if (!e.ok && e.handler_type.startsWith('message') && /^speak: interrupted$/.test(e.error ?? '')) return;
    if (!e.ok) return this.once(`hook:${what}:${shapeOf(e.error ?? '')}`, e.at, [{ style: 'yellow', text: `${what} failed: ${oneLine(e.error ?? '', 240)}` }]);
    if (e.handler_type.startsWith('message') && !this.canSpeak(e.mode)) {
      this.line(e.at, { style: 'yellow', text: `not spoken (mode ${e.mode} has no speak action): ${e.hook_type} ${e.handler_type}` });
    }
  }
}

/** The summary of a repeated failure: how many more, from when to when, and whether it ended or still went on at stop. */
function heldBack(r: { key: string; suppressed: number; first: number; last: number }, state: 'ended' | 'still'): string {
  const what = r.key.replace(/^[a-z.]+:/, '');
  const span = r.first === r.last ? `at ${time(r.last)}` : `from ${time(r.first)} to ${time(r.last)}`;
  return `(${r.suppressed} more like: ${what}, ${span}${state === 'ended' ? '; no more since' : ''})`;
}

/** The safety governor's line: e-stops and releases in bold, stops and refusals in yellow. */
function safetyLine(e: Extract<AgentEvent, { type: 'safety' }>): Part {
  switch (e.kind) {
    case 'estop':
      return {
        style: 'red',
        text: `EMERGENCY STOP${e.restored ? ' (still latched from before the restart)' : ''} by ${e.source ?? '?'}: ${e.reason} - motion refused until released`,
      };
    case 'release':
      return { style: 'green', text: `emergency stop released by ${e.source ?? '?'}` };
    case 'stop':
      // The obstacle guard's stop says what it saw: "stopped: obstacle 0.31 m ahead".
      if (e.cause === 'obstacle') return { style: 'yellow', text: `stopped: ${e.reason}` };
      return { style: 'yellow', text: `safety stop (${e.cause ?? '?'}): ${e.reason}` };
    default:
      return { style: 'yellow', text: `safety refused ${e.label ?? 'motion'} "${e.value ?? ''}": ${e.reason}` };
  }
}

/**
 * `--events`: one JSON line per event, every string in it through the logs' `redact` (a key, a JWT, a
 * bearer token or URL credentials typed into a prompt or carried by a model's answer print as
 * [REDACTED]). Field names are kept: `token_file` is where the token is, not the token.
 */
export function attachEventLines(bus: AgentBus, write: (text: string) => void = (t) => process.stdout.write(t)): Subscription {
  return bus.events$.subscribe((e) => write(`${JSON.stringify(e, (_k, v: unknown) => (typeof v === 'string' ? redact(v) : v))}\n`));
}

/** `url` with `#token=` and the token read from `file`, or undefined when the file cannot be read. */
function tokenAddress(url: string, file: string): string | undefined {
  try {
    const token = readFileSync(file, 'utf8').trim();
    return token ? `${url}#token=${encodeURIComponent(token)}` : undefined;
  } catch {
    return undefined;
  }
}
