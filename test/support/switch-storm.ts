// TEST AND BENCH ONLY: drives a running agent through its WebSim socket with mode switches and typed keywords at random intervals.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { projectRoot } from '../../src/paths.js';

/** Every mode of the default configuration. */
export const STORM_MODES = ['idle', 'conversation', 'sleep', 'explore'] as const;
/** The keywords of the default configuration's rules, and plain talk. */
export const STORM_PHRASES = [
  'hello',
  'hi',
  "let's talk",
  'chat',
  'go to sleep',
  'good night',
  'wake up',
  'pip',
  "let's explore",
  'look around',
  'what is your name',
  'turn left',
];

/**
 * The shipped default configuration, written into `dir` with WebSim on `port` and mode timeouts of
 * 2-3 s (so timeouts fire during a storm), its media and hook modules beside it. Returns its path.
 */
export function stormConfig(dir: string, port: number): string {
  const root = projectRoot();
  const text = readFileSync(join(root, 'config', 'default.json5'), 'utf8')
    .replaceAll('simulators: [{ type: "WebSim" }]', `simulators: [{ type: "WebSim", config: { port: ${port}, token: "${STORM_TOKEN}" } }]`)
    .replace('timeout_seconds: 120,', 'timeout_seconds: 2,')
    .replace('timeout_seconds: 300,', 'timeout_seconds: 3,')
    .replace('timeout_seconds: 60,', 'timeout_seconds: 2,');
  const file = join(dir, 'default.json5');
  writeFileSync(file, text);
  cpSync(join(root, 'config', 'media'), join(dir, 'media'), { recursive: true });
  cpSync(join(root, 'config', 'hooks'), join(dir, 'hooks'), { recursive: true });
  return file;
}

/** The WebSim token stormConfig sets: switches and typed text act only with a token. */
export const STORM_TOKEN = 'storm-q7Xf2Lm9Rz4Kb8Tw';

export interface StormOptions {
  /** WebSim's port on loopback. */
  port: number;
  token?: string;
  durationMs: number;
  /** Gaps between two commands, uniform in [minGapMs, maxGapMs]. */
  minGapMs: number;
  maxGapMs: number;
  /** Modes to switch to by hand (refusals are expected: the current mode, a switch in progress). */
  modes: readonly string[];
  /** Lines to type (keywords of transition rules, and plain talk). */
  phrases: readonly string[];
  /** Share of commands that are typed lines instead of manual switches (default 0.4). */
  typedShare?: number;
  random?: () => number;
  /** Ends the storm early (the agent died). */
  stopped?: () => boolean;
}

export interface StormReport {
  switches: number;
  typed: number;
  replies: number;
  refused: number;
  /** Refusals, by reason (every refusal must say why). */
  reasons: Record<string, number>;
  /** Refusals without a reason: must stay 0. */
  unexplained: number;
  modeChanges: number;
  /** Modes entered, by name. */
  entered: Record<string, number>;
  /** Transitions by trigger (manual, input_triggered, time_based...). */
  triggers: Record<string, number>;
  /** `error` bus events, by source. */
  errors: Record<string, number>;
}

const bump = (o: Record<string, number>, k: string) => void (o[k] = (o[k] ?? 0) + 1);

/** Opens WebSim's `/events` socket, retrying until it listens (at most `ms`, or until `stopped()`). */
export async function openWebSim(port: number, token: string | undefined = STORM_TOKEN, ms = 15_000, stopped: () => boolean = () => false): Promise<WebSocket> {
  const end = Date.now() + ms;
  const url = `ws://127.0.0.1:${port}/events${token ? `?token=${encodeURIComponent(token)}` : ''}`;
  for (;;) {
    try {
      return await new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url, { headers: { Origin: `http://127.0.0.1:${port}` } });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    } catch (err) {
      if (Date.now() > end || stopped()) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Sends a manual switch or a typed line after every random gap until `durationMs` passes, and counts
 * what the agent answered and did (replies, refusals with their reasons, mode changes by trigger,
 * errors). Timeouts of the agent's own modes fire on their own meanwhile.
 */
export async function runSwitchStorm(options: StormOptions): Promise<StormReport> {
  const random = options.random ?? Math.random;
  const ws = await openWebSim(options.port, options.token, 15_000, options.stopped);
  const report: StormReport = {
    switches: 0,
    typed: 0,
    replies: 0,
    refused: 0,
    reasons: {},
    unexplained: 0,
    modeChanges: 0,
    entered: {},
    triggers: {},
    errors: {},
  };
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as {
      type: string;
      ok?: boolean;
      reason?: string;
      event?: { type: string; to?: string; trigger?: string; source?: string; reason?: string };
    };
    if (m.type === 'reply') {
      report.replies += 1;
      if (m.ok === false) {
        report.refused += 1;
        if (m.reason?.trim()) bump(report.reasons, m.reason.replace(/"[^"]*"/g, '"…"'));
        else report.unexplained += 1;
      }
    } else if (m.type === 'event' && m.event?.type === 'mode.changed') {
      report.modeChanges += 1;
      bump(report.entered, m.event.to ?? '?');
      bump(report.triggers, m.event.trigger ?? '?');
    } else if (m.type === 'event' && m.event?.type === 'mode.refused' && !m.event.reason?.trim()) report.unexplained += 1;
    else if (m.type === 'event' && m.event?.type === 'error') bump(report.errors, m.event.source ?? '?');
  });
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const end = Date.now() + options.durationMs;
  let id = 0;
  while (Date.now() < end && !options.stopped?.() && ws.readyState === WebSocket.OPEN) {
    if (random() < (options.typedShare ?? 0.4)) {
      ws.send(JSON.stringify({ type: 'text', id: ++id, text: pick(options.phrases) }));
      report.typed += 1;
    } else {
      ws.send(JSON.stringify({ type: 'mode.switch', id: ++id, mode: pick(options.modes) }));
      report.switches += 1;
    }
    const gap = options.minGapMs + random() * (options.maxGapMs - options.minGapMs);
    await new Promise((r) => setTimeout(r, gap));
  }
  ws.close();
  return report;
}

/**
 * Brings the agent to `mode` by hand (retrying while a switch is in progress) and lets it run there
 * for `settleMs`, so samples taken afterwards compare like with like. Resolves false if it never got there.
 */
export async function settleIn(port: number, mode: string, settleMs: number, token: string | undefined = STORM_TOKEN, ms = 30_000): Promise<boolean> {
  const ws = await openWebSim(port, token);
  const end = Date.now() + ms;
  let id = 0;
  try {
    while (Date.now() < end) {
      const reply = await new Promise<{ ok: boolean; reason?: string }>((resolve) => {
        const myId = ++id;
        const onMessage = (data: unknown) => {
          const m = JSON.parse(String(data)) as { type: string; id?: number; ok?: boolean; reason?: string };
          if (m.type === 'reply' && m.id === myId) {
            ws.off('message', onMessage);
            resolve({ ok: Boolean(m.ok), ...(m.reason ? { reason: m.reason } : {}) });
          }
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ type: 'mode.switch', id: myId, mode }));
      });
      if (reply.ok || /already|current/i.test(reply.reason ?? '')) {
        await new Promise((r) => setTimeout(r, settleMs));
        return true;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  } finally {
    ws.close();
  }
}
