// A copy of config/default.json5 in a temp dir with WebSim on a free port, and a WebSim socket client that switches modes and types.
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';

const ROOT = join(import.meta.dirname, '..', '..');

/** A TCP port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface DefaultAgentDir {
  dir: string;
  config: string;
  state: string;
  port: number;
}

/**
 * The shipped default configuration, unchanged but for WebSim's port and `edit` (applied to the
 * JSON5 text), with its media and hook modules beside it so `${CONFIG_DIR}` paths resolve.
 */
export async function defaultAgentDir(edit: (text: string) => string = (s) => s): Promise<DefaultAgentDir> {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-default-'));
  const port = await freePort();
  const text = readFileSync(join(ROOT, 'config', 'default.json5'), 'utf8').replaceAll(
    'simulators: [{ type: "WebSim" }]',
    `simulators: [{ type: "WebSim", config: { port: ${port} } }]`,
  );
  const config = join(dir, 'default.json5');
  writeFileSync(config, edit(text));
  cpSync(join(ROOT, 'config', 'media'), join(dir, 'media'), { recursive: true });
  cpSync(join(ROOT, 'config', 'hooks'), join(dir, 'hooks'), { recursive: true });
  statesByPort.set(port, join(dir, 'state'));
  return { dir, config, state: join(dir, 'state'), port };
}

/** The state directory of each agent made here, by WebSim port: where its generated WebSim token is. */
const statesByPort = new Map<number, string>();

/** The WebSim token an agent made by defaultAgentDir generated (its state dir's `websim-token`), if any yet. */
export function webSimToken(port: number): string | undefined {
  const state = statesByPort.get(port);
  const file = state ? join(state, 'websim-token') : undefined;
  return file && existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

export interface WebSimClient {
  switchMode(mode: string): void;
  say(text: string): void;
  close(): void;
}

/**
 * Connects to a running agent's WebSim `/events` socket, retrying until it listens (at most `ms`).
 * `token`: the configured one (which watching needs too); default the token an agent made by
 * defaultAgentDir generated.
 */
export async function webSimClient(port: number, ms = 15_000, configuredToken?: string): Promise<WebSimClient> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const ws = await new Promise<WebSocket>((resolve, reject) => {
        const query = configuredToken ? `?token=${encodeURIComponent(configuredToken)}` : '';
        const socket = new WebSocket(`ws://127.0.0.1:${port}/events${query}`, { headers: { Origin: `http://127.0.0.1:${port}` } });
        socket.once('open', () => resolve(socket));
        socket.once('error', reject);
      });
      let id = 0;
      const send = (m: Record<string, unknown>) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ ...m, id: ++id }));
      // Acting needs the token: prove it first (messages are handled in order).
      const token = webSimToken(port);
      if (token) send({ type: 'auth', token });
      return {
        switchMode: (mode) => send({ type: 'mode.switch', mode }),
        say: (text) => send({ type: 'text', text }),
        close: () => ws.close(),
      };
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
