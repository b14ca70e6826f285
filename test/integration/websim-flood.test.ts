// The real default agent under a WebSim typing flood and 600 pages that never read: memory stays bounded, the speech queue drops with a count; another local user cannot act through WebSim.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { strangerUser } from '../helpers/stranger.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import type { AgentEvent } from '../../src/cortex/events.js';
import { ACTION_QUEUE_LIMIT } from '../../actors/actions/action.js';
import { startAgent } from '../helpers/agent-process.js';
import { defaultAgentDir } from '../helpers/default-agent.js';
import { procStats } from '../support/proc-stats.js';
import { asOtherUser } from '../helpers/readable-cli.js';

requireBuild();
const ROOT = join(import.meta.dirname, '..', '..');
/** The audit's ceiling for the agent through a typing flood. */
const RSS_LIMIT_MB = 400;
/** The audit typed 10 lines a second for 40 s; this file shows the bound in less. */
const FLOOD_MS = 12_000;
const LINE = 'robot please repeat after me '.repeat(70).slice(0, 2000);

type ActionEvent = Extract<AgentEvent, { type: 'action' }>;

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

/** What the other user runs: view the page, then try every action over the socket without the token, and the e-stop. */
const STRANGER_SCRIPT = `
import { WebSocket } from 'ws';

const port = Number(process.argv[2]);
const out = { uid: process.getuid(), page: 0, wrongToken: 0, replies: {} };
out.page = (await fetch('http://127.0.0.1:' + port + '/api/state')).status;
out.wrongToken = (await fetch('http://127.0.0.1:' + port + '/api/state', { headers: { 'x-websim-token': 'guessed-guessed-guessed' } })).status;
const ws = new WebSocket('ws://127.0.0.1:' + port + '/events');
await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
const tries = [
  { type: 'text', id: 1, text: 'turn left' },
  { type: 'mode.switch', id: 2, mode: 'conversation' },
  { type: 'context', id: 3, name: 'visitor', value: 'true' },
  { type: 'estop.release', id: 4, token: 'guessed-guessed-guessed' },
  { type: 'estop', id: 5, reason: 'a stranger pressed stop' },
];
ws.on('message', (d) => {
  const m = JSON.parse(String(d));
  if (m.type === 'reply') out.replies[m.id] = { ok: m.ok, reason: m.reason };
  if (Object.keys(out.replies).length === tries.length) (console.log(JSON.stringify(out)), ws.close());
});
for (const m of tries) ws.send(JSON.stringify(m));
setTimeout(() => (console.log(JSON.stringify(out)), process.exit(1)), 20000).unref();
`;

t.test('another local user may watch and latch the e-stop through WebSim, but every action without the token is refused', async (t) => {
  const user = strangerUser();
  if (!user) {
    t.comment('not root (or no setpriv/useradd): the check with another user is left out');
    return;
  }
  const d = await defaultAgentDir();
  const agent = startAgent(d.config, d.state, ['--for', '90s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'simulator.ready', 30_000, 'WebSim listening');
  // Root's home is 0700: what the other user runs is copied to a temp dir it can read.
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-stranger-'));
  chmodSync(dir, 0o755);
  cpSync(join(ROOT, 'node_modules', 'ws'), join(dir, 'node_modules', 'ws'), { recursive: true });
  writeFileSync(join(dir, 'try.mjs'), STRANGER_SCRIPT, { mode: 0o644 });
  execFileSync('chmod', ['-R', 'a+rX', dir]);
  const other = asOtherUser({ uid: user.uid, gid: user.gid }, [join(dir, 'try.mjs'), String(d.port)]);
  const run = spawnSync(other.cmd, other.args, {
    cwd: dir,
    // A clean environment: the test runner's loader options are for this process, not the other user's.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (run.status !== 0) t.comment(run.stderr.slice(-1000));
  t.equal(run.status, 0, 'the script ran as the other user');
  const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
    uid: number;
    page: number;
    wrongToken: number;
    replies: Record<string, { ok: boolean; reason?: string }>;
  };
  t.equal(out.uid, user.uid, 'it really was another user');
  t.equal(out.page, 200, 'watching is open on loopback');
  t.equal(out.wrongToken, 401, 'a guessed token is refused');
  for (const id of ['1', '2', '3']) t.match(out.replies[id], { ok: false, reason: /needs the WebSim token/ }, `action ${id} refused`);
  t.match(out.replies['4'], { ok: false, reason: 'wrong WebSim token' }, 'release refused');
  t.match(out.replies['5'], { ok: true }, 'the stop is open to anyone who reaches the page');
  t.notOk(
    agent.events.some((e) => e.type === 'mode.changed' && e.to === 'conversation'),
    'no mode switch happened',
  );
  t.notOk(
    agent.events.some((e) => e.type === 'input' && JSON.stringify(e).includes('turn left')),
    'the typed line never reached an input',
  );
  await agent.waitFor((e) => e.type === 'safety' && e.kind === 'estop' && e.source === 'websim', 10_000, 'the stop latched');
  t.pass('the stop latched');
  agent.child.kill('SIGTERM');
  await agent.exited;
});

t.test(
  `a ${FLOOD_MS / 1000} s typing flood of 2000-character lines and 600 pages that never read: RSS under ${RSS_LIMIT_MB} MB, the speech queue bounded and dropping`,
  async (t) => {
    const d = await defaultAgentDir();
    const agent = startAgent(d.config, d.state, ['--for', '120s']);
    t.teardown(() => void agent.child.kill('SIGKILL'));
    const ready = await agent.waitFor<Extract<AgentEvent, { type: 'simulator.ready' }>>((e) => e.type === 'simulator.ready', 30_000, 'WebSim listening');
    const token = readFileSync(ready.token_file!, 'utf8').trim();
    const pid = agent.child.pid!;
    const baseline = procStats(pid).rssMb;

    const ws = new WebSocket(`ws://127.0.0.1:${d.port}/events?token=${encodeURIComponent(token)}`);
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    t.teardown(() => ws.close());
    ws.on('message', () => undefined);
    // 600 pages that upgrade and never read again (the audit's 751 MB). They come after the person's
    // page: on loopback every local user is one peer, so a flood fills the per-peer cap until the
    // silent pages are dropped (no pong); a page already open keeps working.
    const silent: Socket[] = [];
    for (let i = 0; i < 600; i++) {
      const s = connect(d.port, '127.0.0.1');
      s.on('error', () => undefined);
      s.write(
        `GET /events HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      s.pause();
      silent.push(s);
    }
    t.teardown(() => silent.forEach((s) => s.destroy()));

    let peak = baseline;
    let id = 0;
    const end = Date.now() + FLOOD_MS;
    while (Date.now() < end) {
      ws.send(JSON.stringify({ type: 'text', id: ++id, text: `${id} ${LINE}`.slice(0, 2000) }));
      peak = Math.max(peak, procStats(pid).rssMb);
      await new Promise((r) => setTimeout(r, 100));
    }
    // The speech that was queued keeps playing after the flood: memory must not keep climbing.
    for (let i = 0; i < 20; i++) {
      peak = Math.max(peak, procStats(pid).rssMb);
      await new Promise((r) => setTimeout(r, 250));
    }
    t.comment(`agent RSS: baseline ${baseline} MB, peak ${peak} MB through ${id} lines and 600 silent pages`);
    t.ok(peak < RSS_LIMIT_MB, `peak RSS ${peak} MB < ${RSS_LIMIT_MB} MB`);
    const speech = agent.events.filter((e): e is ActionEvent => e.type === 'action' && e.label === 'speak');
    t.ok(speech.length > 0, 'the flood was answered');
    t.ok(
      speech.every((e) => (e.queue ?? 0) <= ACTION_QUEUE_LIMIT),
      `no speech queue past ${ACTION_QUEUE_LIMIT} (max ${Math.max(...speech.map((e) => e.queue ?? 0))})`,
    );
    const overflow = speech.filter((e) => e.state === 'dropped' && /queue full/.test(e.error ?? ''));
    t.ok(
      overflow.length > 0,
      `the queue dropped with a reason (${overflow.length} dropped, overflowed ${Math.max(0, ...speech.map((e) => e.overflowed ?? 0))})`,
    );
    agent.child.kill('SIGTERM');
    t.equal(await agent.exited, 0, 'the agent still stops cleanly');
  },
);
