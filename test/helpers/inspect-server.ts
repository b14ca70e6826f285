// The other end of `cortexd run --inspect ws://…`: a WebSocket server on a free local port that records every inspection message the agent sends.
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/** One inspection message as the tests read it (`@xstate.actor`, `@xstate.snapshot`, `@xstate.event`). */
export type InspectMsg = { type: string; sessionId: string; rootId?: string; parentId?: string; name?: string; snapshot?: { status?: string } };

/** Listens on 127.0.0.1; `teardown` is given its close (tap's `t.teardown`). `msgs` fills as the agent sends. */
export async function inspectServer(teardown: (fn: () => Promise<void>) => void): Promise<{ url: string; msgs: InspectMsg[] }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const msgs: InspectMsg[] = [];
  server.on('connection', (ws) => ws.on('message', (data) => msgs.push(JSON.parse(data.toString()) as InspectMsg)));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, msgs };
}
