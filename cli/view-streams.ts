// How the terminal view reports sockets, brokers and devices: the first connection, failures, and reconnect storms as one summary line per 30 s.
import type { StreamEvent } from '../src/cortex/events.js';

/** At most one line per stream in this time, failures excepted. */
export const STREAM_SUMMARY_MS = 30_000;

/** A line the view prints for a stream, and how loud it is. */
export interface StreamLine {
  level: 'info' | 'warn' | 'bad' | 'ok';
  text: string;
}

interface Track {
  streamed: boolean;
  /** When the last trouble or recovery line was printed (-Infinity: never). */
  lastPrint: number;
  /** Since the last printed line: reconnects after a healthy connection, and attempts that failed. */
  reconnects: number;
  failures: number;
  lastReason?: string;
  breaker: boolean;
  /** The last line printed said the socket is down: the next streaming says it is back. */
  down: boolean;
}

const KIND_LABEL = {
  asr: 'speech recognition socket',
  vlm: 'vision socket',
  mqtt: 'broker connection',
  mic: 'microphone',
  cam: 'camera',
  serial: 'serial port',
  dds: 'robot over DDS',
  lidar: 'lidar',
} as const;
/** A device (a microphone's recorder, a camera, a serial port) is opened, a connection connects. */
const isDevice = (e: Pick<StreamEvent, 'kind'>) => e.kind === 'mic' || e.kind === 'cam' || e.kind === 'serial' || e.kind === 'lidar';
const cannot = (e: Pick<StreamEvent, 'kind'>) => (isDevice(e) ? 'cannot open' : 'cannot connect');
const label = (e: Pick<StreamEvent, 'kind' | 'input'>) => `${KIND_LABEL[e.kind] ?? e.kind} (${e.input})`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

function counts(t: Track): string {
  const parts: string[] = [];
  if (t.reconnects) parts.push(`${t.reconnects} reconnect${t.reconnects === 1 ? '' : 's'}`);
  if (t.failures) parts.push(`${t.failures} failed attempt${t.failures === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/**
 * Follows `stream` events and says what a person needs: the first connection; a lost connection at
 * once and its recovery when it comes; then, while connections keep dropping, at most one line of
 * trouble per STREAM_SUMMARY_MS with what happened since (reconnects, failed attempts, the last
 * reason, an open breaker) and the recovery after it; a failure always.
 */
export class StreamSummary {
  private readonly tracks = new Map<string, Track>();

  offer(e: StreamEvent): StreamLine | undefined {
    const key = `${e.kind}:${e.input}`;
    let t = this.tracks.get(key);
    if (!t) this.tracks.set(key, (t = { streamed: false, lastPrint: Number.NEGATIVE_INFINITY, reconnects: 0, failures: 0, breaker: false, down: false }));
    // The reason of the change (`detail` is the older name of the field).
    // The engine's "reconnecting at once: " and "connect failed: " are what the line says already.
    const reason = (e.reason ?? e.detail)?.replace(/^(reconnecting at once|connect failed): /, '');
    if (reason) t.lastReason = reason;
    switch (e.state) {
      case 'failed': {
        const since = counts(t);
        this.reset(t, e.at);
        t.down = false;
        return { level: 'bad', text: `${label(e)} failed: ${reason ?? 'no reason given'}${since ? ` (after ${since})` : ''}` };
      }
      case 'stopped': {
        // Its input stopped (the mode was left): its next run is a new connection, said as one, not as a
        // reconnect. Reconnects held back by the summary window are said now.
        this.tracks.delete(key);
        return this.heldBack(e, t, e.at);
      }
      case 'streaming': {
        if (!t.streamed) {
          t.streamed = true;
          if (t.reconnects + t.failures === 0) {
            if (!isDevice(e)) return { level: 'info', text: `${label(e)} connected` };
            // A device that opened has not proved it delivers anything yet: only its troubles (and its recovery from them) are said.
            if (!t.down) return undefined;
            t.down = false;
            this.reset(t, e.at);
            return { level: 'ok', text: `${label(e)} open` };
          }
        }
        if (t.down) {
          // Back after a line that said it was down: said at once (a storm then prints at most two lines per period).
          const since = counts(t);
          t.down = false;
          this.reset(t, e.at);
          return { level: 'ok', text: `${label(e)} streaming again${since ? ` (after ${since})` : ''}` };
        }
        if (t.reconnects + t.failures === 0 || e.at - t.lastPrint < STREAM_SUMMARY_MS) return undefined;
        const text = `${label(e)} streaming again (${counts(t)} in the last ${seconds(e.at - t.lastPrint)}${t.lastReason ? `; last reason: ${t.lastReason}` : ''})`;
        this.reset(t, e.at);
        return { level: 'ok', text };
      }
      case 'connecting':
      case 'backingOff': {
        // The first connection attempts of a stream that never streamed are not trouble yet.
        if (e.state === 'connecting' && !t.streamed && t.failures === 0) return undefined;
        // An idle socket the server closed normally (its silence timeout) and that reopens at once: routine, not news.
        if (e.state === 'connecting' && e.routine === true) return undefined;
        if (e.state === 'connecting') t.reconnects += 1;
        else t.failures += 1;
        t.breaker = e.breaker === true;
        if (e.at - t.lastPrint < STREAM_SUMMARY_MS) return undefined;
        const first = !Number.isFinite(t.lastPrint) || t.reconnects + t.failures === 1;
        const next = e.state === 'backingOff' && e.delay_ms !== undefined ? `, next try in ${seconds(e.delay_ms)}` : '';
        const why = reason ? `: ${reason}` : '';
        const text = first
          ? `${label(e)} ${e.state === 'connecting' ? (isDevice(e) ? 'reopening' : 'reconnecting') : cannot(e)}${next}${t.breaker ? ' (breaker open)' : ''}${why}`
          : `${label(e)} still unsteady: ${counts(t)} in the last ${seconds(e.at - t.lastPrint)}${next}${t.breaker ? ' (breaker open)' : ''}${why}`;
        this.reset(t, e.at);
        t.down = true;
        return { level: 'warn', text };
      }
      default:
        return undefined;
    }
  }

  /** Lines for what was held back (at stop): one per stream with unreported reconnects. */
  flush(at: number): StreamLine[] {
    const out: StreamLine[] = [];
    for (const [key, t] of this.tracks) {
      const [kind, input] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
      const line = this.heldBack({ kind: kind as StreamEvent['kind'], input }, t, at);
      if (line) out.push(line);
    }
    return out;
  }

  /** The line for a stream's reconnects and failed attempts not said yet, if any. */
  private heldBack(e: Pick<StreamEvent, 'kind' | 'input'>, t: Track, at: number): StreamLine | undefined {
    if (t.reconnects + t.failures === 0) return undefined;
    const since = Number.isFinite(t.lastPrint) ? `in the last ${seconds(at - t.lastPrint)}` : 'during the run';
    const line: StreamLine = { level: 'warn', text: `${label(e)}: ${counts(t)} ${since}` };
    this.reset(t, at);
    return line;
  }

  private reset(t: Track, at: number): void {
    t.lastPrint = at;
    t.reconnects = 0;
    t.failures = 0;
  }
}
