// A stand-in agent (real bus and config, records what the page asked for) and a page-socket client, for WebSim tests.
import { WebSocket } from 'ws';
import { AgentBus } from '../../src/cortex/events.js';
import type { AgentControl } from '../../src/cortex/contracts.js';
import type { ServerMessage } from '../../src/websim/page/state.js';

type Config = AgentControl['config'];

/** The media a stand-in agent previews: a camera frame (bytes as given) and a microphone level. */
interface StubMedia {
  frame?: { input: string; jpeg: Buffer; at: number };
  level?: { input: string; rms_dbfs: number; peak_dbfs: number; at: number };
}

/** A stand-in agent: real bus and config, records what the page asked for. */
export function stubAgent(config: Config, opts: { switchOk?: boolean; media?: StubMedia } = {}) {
  const bus = new AgentBus();
  const calls = { texts: [] as string[], switches: [] as string[] };
  let mode = config.default_mode;
  const agent: AgentControl = {
    bus,
    configName: 'default',
    config,
    currentMode: () => mode,
    async switchMode(to) {
      calls.switches.push(to);
      if (opts.switchOk === false) return { ok: false, reason: 'no manual rule leads there' };
      bus.emit({ type: 'mode.changed', at: Date.now(), from: mode, to, trigger: 'manual', reason: 'manual switch from WebSim' });
      mode = to;
      return { ok: true };
    },
    pushText(text) {
      calls.texts.push(text);
      return true;
    },
    estop: () => {},
    release: async () => ({ ok: false, reason: 'no emergency stop is latched' }),
    safetyStatus: () => ({ estop: null, motion: 'still', stopping: false, faults: [] }),
    media: { frame: async () => opts.media?.frame, level: () => opts.media?.level },
  };
  return { agent, bus, calls };
}

/** Opens a socket and collects messages; `next(pred)` waits (with a timeout) for a matching one. */
export async function client(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  const seen: ServerMessage[] = [];
  const waiters: Array<{ pred: (m: ServerMessage) => boolean; resolve: (m: ServerMessage) => void }> = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as ServerMessage;
    seen.push(m);
    for (const w of [...waiters]) if (w.pred(m)) waiters.splice(waiters.indexOf(w), 1), w.resolve(m);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  const next = (pred: (m: ServerMessage) => boolean, ms = 5000) =>
    new Promise<ServerMessage>((resolve, reject) => {
      const found = seen.find(pred);
      if (found) return resolve(found);
      const timer = setTimeout(() => reject(new Error('timed out waiting for a message')), ms);
      waiters.push({ pred, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  return { ws, next, seen };
}
