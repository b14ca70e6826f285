// The terminal view of `cortexd run`: one readable line per thing a person watching the robot cares about.
import type { Subscription } from 'rxjs';
import type { AgentBus, AgentEvent } from '../cortex/events.js';
import { oneLine } from './output.js';

export interface ViewOptions {
  /** Where lines go (default stdout). */
  write?: (text: string) => void;
  /** Colours (default: when stdout is a TTY and NO_COLOR is unset). */
  color?: boolean;
  /** Display names of modes, for the mode lines. */
  displayNames?: Record<string, string>;
}

const CODES = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 } as const;
type Style = keyof typeof CODES;

const time = (at: number): string => new Date(at).toTimeString().slice(0, 8);

function preview(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1 && typeof entries[0]![1] === 'string') return entries[0]![1] as string;
  }
  return JSON.stringify(value);
}

/**
 * Renders the bus: the mode (and every switch with its reason), each input line, each model answer
 * (text and tool calls, latency), console action output (through `consoleLine`), failures of
 * actions, hooks and the model, and the stop. Ticks that did nothing are not shown.
 */
export class TerminalView {
  private readonly write: (text: string) => void;
  private readonly color: boolean;
  private readonly names: Record<string, string>;
  private sub: Subscription | undefined;

  constructor(options: ViewOptions = {}) {
    this.write = options.write ?? ((t) => process.stdout.write(t));
    this.color = options.color ?? (Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
    this.names = options.displayNames ?? {};
  }

  attach(bus: AgentBus): this {
    this.sub = bus.events$.subscribe((e) => this.render(e));
    return this;
  }

  detach(): void {
    this.sub?.unsubscribe();
  }

  /** Output of `console` connectors (`[speak] Hello!`): what the robot does, in bold. */
  consoleLine(line: string): void {
    this.line(Date.now(), `  ${this.paint('bold', line)}`);
  }

  private paint(style: Style, text: string): string {
    return this.color ? `\x1b[${CODES[style]}m${text}\x1b[0m` : text;
  }

  private line(at: number, text: string): void {
    this.write(`${this.paint('dim', time(at))} ${oneLine(text)}\n`);
  }

  private mode(name: string): string {
    const display = this.names[name];
    return display && display !== name ? `${name} (${display})` : name;
  }

  render(e: AgentEvent): void {
    switch (e.type) {
      case 'agent.started':
        this.line(e.at, this.paint('cyan', `cortexd: agent ${e.config} starting in mode ${this.mode(e.mode)}${e.service ? `, service ${e.service}` : ''}`));
        this.line(e.at, this.paint('dim', 'type a line and press Enter to talk to it; Ctrl-C stops'));
        return;
      case 'mode.changed':
        this.line(e.at, this.paint('magenta', `mode ${this.mode(e.from)} -> ${this.mode(e.to)} (${e.trigger}: ${e.reason})`));
        return;
      case 'mode.refused':
        this.line(e.at, this.paint('yellow', `switch to ${e.requested} refused: ${e.reason}`));
        return;
      case 'input':
        this.line(e.at, `${this.paint('green', `heard (${e.input}):`)} ${e.text}`);
        return;
      case 'model.answer': {
        const calls = e.tool_calls.map((c) => `${c.name}(${preview(c.arguments)})`).join(', ');
        const said = e.text ? ` "${e.text}"` : '';
        this.line(e.at, `${this.paint('blue', `model ${e.model}`)} ${e.latency_ms} ms:${said}${calls ? ` ${calls}` : said ? '' : ' (nothing to do)'}`);
        return;
      }
      case 'model.error':
        this.line(e.at, this.paint('red', `model failed: ${e.error}`));
        return;
      case 'action':
        if (e.state === 'failed' || e.state === 'dropped') this.line(e.at, this.paint('yellow', `${e.label} ${e.state}: ${e.error ?? ''}`));
        return;
      case 'hook':
        if (!e.ok) this.line(e.at, this.paint('yellow', `${e.hook_type} ${e.handler_type} hook of ${e.mode} failed: ${e.error ?? ''}`));
        return;
      case 'mcp':
        if (e.state !== 'call') this.line(e.at, `tool server ${e.server}: ${e.state}${e.detail ? ` (${e.detail})` : ''}`);
        return;
      case 'stream':
        if (e.state === 'failed') this.line(e.at, this.paint('red', `${e.kind} ${e.input} failed: ${e.detail ?? ''}`));
        return;
      case 'error':
        this.line(e.at, this.paint('red', `${e.source}: ${e.message}`));
        return;
      case 'safety':
        this.line(e.at, safetyLine(e, (s, t) => this.paint(s, t)));
        return;
      case 'fleet':
        if (e.state === 'connected') this.line(e.at, this.paint('cyan', `fleet: ${e.robot} online at ${e.broker}`));
        else if (e.state === 'failed') this.line(e.at, this.paint('red', `fleet: ${e.reason ?? 'failed'}`));
        else if (e.state === 'backingOff' && e.attempt === 2) this.line(e.at, this.paint('yellow', `fleet: ${e.reason ?? 'disconnected'}; retrying`));
        return;
      case 'fleet.command':
        this.line(e.at, this.paint(e.ok ? 'cyan' : 'yellow', `fleet command ${e.command} ${e.ok ? 'done' : `refused: ${e.reason ?? ''}`}`));
        return;
      case 'agent.stopping':
        this.line(e.at, this.paint('cyan', `stopping (${e.reason})...`));
        return;
      case 'agent.stopped':
        this.line(e.at, this.paint('cyan', `stopped (exit ${e.code})`));
        return;
      default:
        return;
    }
  }
}

/** The safety governor's line: e-stops and releases in bold, stops and refusals in yellow. */
function safetyLine(e: Extract<AgentEvent, { type: 'safety' }>, paint: (style: Style, text: string) => string): string {
  switch (e.kind) {
    case 'estop':
      return paint('red', paint('bold', `EMERGENCY STOP${e.restored ? ' (still latched from before the restart)' : ''} by ${e.source ?? '?'}: ${e.reason} - motion refused until released`));
    case 'release':
      return paint('green', `emergency stop released by ${e.source ?? '?'}`);
    case 'stop':
      return paint('yellow', `safety stop (${e.cause ?? '?'}): ${e.reason}`);
    default:
      return paint('yellow', `safety refused ${e.label ?? 'motion'} "${e.value ?? ''}": ${e.reason}`);
  }
}

/** `--events`: one JSON line per event. */
export function attachEventLines(bus: AgentBus, write: (text: string) => void = (t) => process.stdout.write(t)): Subscription {
  return bus.events$.subscribe((e) => write(`${JSON.stringify(e)}\n`));
}
