// The e-stop socket answers from its own thread: ESTOP latches and STATUS answers while the main thread is blocked, and the next motion command is refused before the main thread ran once.
import t, { type Test } from 'tap';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createActor } from 'xstate';
import { createActionHandle } from '../../actors/actions/action.js';
import { EstopGate } from '../../actors/safety/estop-gate.js';
import { governorLogic } from '../../actors/safety/governor.js';
import { statusOfSnapshot } from '../../actors/safety/status.js';
import { SafetyConfig } from '../../src/config/safety.js';
import type { AgentConfig } from '../../src/config/schema.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { resolvePolicy } from '../../src/safety/policy.js';
import { wireRig } from '../helpers/governor.js';

t.setTimeout(120_000);
type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

const { wire, entry, plugins, settle } = await wireRig();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client in another process: sends `lines`, prints the answers (one per line sent). */
const CLIENT = `
const [path, text] = process.argv.slice(1);
const want = text.split('\\n').length;
const s = require('node:net').connect(path);
let b = '';
s.on('connect', () => s.write(text + '\\n'));
s.on('data', (d) => { b += d; if (b.split('\\n').length > want) { s.destroy(); process.stdout.write(b, () => process.exit(0)); } });
s.on('error', (e) => { process.stdout.write('ERROR ' + e.message); process.exit(1); });
setTimeout(() => process.exit(3), 30000);
`;
/** Blocks this (the main) thread until the client got its answers: only another thread can answer meanwhile. */
const askBlocking = (path: string, text: string) =>
  execFileSync(process.execPath, ['-e', CLIENT, path, text], { encoding: 'utf8', timeout: 60_000 }).trim().split('\n');
const ask = (path: string, text: string) =>
  new Promise<string[]>((resolve, reject) =>
    execFile(process.execPath, ['-e', CLIENT, path, text], { timeout: 60_000 }, (err, out) => (err ? reject(err) : resolve(out.trim().split('\n')))),
  );

async function rig(t: Test) {
  wire.length = 0;
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-estop-thread-'));
  const path = join(dir, 'run', 'estop-t.sock');
  const bus = new AgentBus();
  const events: AgentEvent[] = [];
  bus.events$.subscribe((e) => events.push(e));
  const config = { modes: { m: { safety: {} } }, safety: SafetyConfig.parse({ deadman_seconds: 600 }) } as unknown as Pick<AgentConfig, 'modes' | 'safety'>;
  const governor = createActor(governorLogic(), {
    input: { policy: resolvePolicy(config), bus, logger: pino({ level: 'silent' }), now: Date.now, mode: 'm', socket: { path }, gate: new EstopGate() },
  });
  governor.start();
  const handle = createActionHandle(
    entry,
    { logger: pino({ level: 'silent' }), bus, mode: 'm', stateDir: dir, write: () => {}, plugins },
    { safety: governor },
  );
  t.teardown(async () => {
    await handle.stop();
    governor.stop();
  });
  for (let i = 0; !existsSync(path); i++) {
    if (i > 600) throw new Error(`the socket ${path} never appeared`);
    await sleep(50);
  }
  const actions = () => events.filter((e): e is Ev<'action'> => e.type === 'action');
  return { path, governor, handle, events, actions };
}

t.test('ESTOP latches while the main thread is blocked; the next motion command is refused before the main thread ran', async (t) => {
  const r = await rig(t);
  r.handle.dispatch({ action: 'walk forward' }, 'model');
  await settle();
  t.same(wire, ['MOVE walk forward'], 'motion runs before the e-stop');

  // From here to the dispatch below, this thread never yields: every answer comes from the socket's thread.
  t.same(askBlocking(r.path, 'ESTOP pressed while busy'), ['OK latched']);
  const status = JSON.parse(askBlocking(r.path, 'STATUS')[0]!.replace(/^OK /, ''));
  t.match(status, { estop: { source: 'socket', reason: 'pressed while busy' } }, 'STATUS shows the latch at once');
  t.equal(statusOfSnapshot(r.governor.getSnapshot()).estop, null, 'the governor has not run yet');
  r.handle.dispatch({ action: 'walk forward' }, 'model');
  t.same(
    wire.filter((w) => w.startsWith('MOVE')),
    ['MOVE walk forward'],
    'the command after the latch never reached the connector',
  );
  t.match(
    statusOfSnapshot(r.governor.getSnapshot()).estop,
    { source: 'socket', reason: 'pressed while busy' },
    'the governor latched when it decided on that command',
  );

  await settle();
  // Refused, or stopped by the halt of the latch it caused (both before the connector ran).
  t.match(r.actions().at(-1), { state: /^(failed|interrupted)$/, error: /emergency stop.*socket.*pressed while busy/ });
  t.ok(
    r.events.some((e) => e.type === 'safety' && e.kind === 'estop' && e.source === 'socket'),
    'the latch is announced on the bus',
  );
  t.equal(wire.at(-1), 'STOP', 'the stop command went to the connector');

  // Release, then the status on the same connection shows it (answers in order).
  t.same(
    (await ask(r.path, 'RELEASE\nSTATUS')).map((l) => l.slice(0, 14)),
    ['OK released', 'OK {"estop":nu'],
  );
  r.handle.dispatch({ action: 'turn left' }, 'model');
  await settle();
  t.equal(wire.at(-1), 'MOVE turn left', 'motion again after the release');
  t.same(await ask(r.path, 'RELEASE'), ['ERR no emergency stop is latched']);
});

t.test('an ESTOP the main thread hears of first (no motion command) latches the governor; stopping removes the socket', async (t) => {
  const r = await rig(t);
  t.same(await ask(r.path, 'ESTOP from the thread'), ['OK latched']);
  for (let i = 0; !statusOfSnapshot(r.governor.getSnapshot()).estop; i++) {
    if (i > 600) throw new Error('the governor never latched');
    await sleep(20);
  }
  t.match(statusOfSnapshot(r.governor.getSnapshot()).estop, { source: 'socket', reason: 'from the thread' });
  t.same(await ask(r.path, 'NOPE'), ['ERR unknown command "NOPE" (ESTOP [reason], RELEASE, STATUS)']);
  r.governor.stop();
  t.notOk(existsSync(r.path), 'the socket file is gone when the governor stops');
});
