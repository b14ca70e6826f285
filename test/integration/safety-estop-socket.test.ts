// The local e-stop socket through `cortexd estop` as a process: latch, status, release; other users refused by the kernel, the service group allowed.
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../../actors/agent/agent.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import { AgentConfig, type LoadedConfig } from '../../src/config/schema.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { createLogger } from '../../src/log.js';
import { findOnPath } from '../../src/which.js';
import { MAIN } from '../helpers/agent-process.js';
import { requireBuild } from '../helpers/requires.js';
import { asOtherUser, otherUserEnv, readableCli } from '../helpers/readable-cli.js';
import { scriptedLlm } from '../helpers/plugins.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

/** The service group of this test: dialout (gid 20 on Debian), which `nobody` is not a member of. */
const GROUP = 20;
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0 && findOnPath('setpriv') !== undefined;

const walker = scriptedLlm('WalkerLLM', (_user, _signal, { call }) => call('move', { action: 'walk forward' }), 'walks forward on every call');

/** Runs `cortexd estop ...` (as `uid` with `groups` through setpriv, else as this user); resolves with its exit code and output. */
function estop(
  args: string[],
  as?: { uid: number; groups: number[]; main: string },
  runtimeDir = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  const other = as ? asOtherUser({ uid: as.uid, groups: as.groups }, [as.main, 'estop', ...args]) : undefined;
  const [cmd, argv] = other ? [other.cmd, other.args] : [process.execPath, [MAIN, 'estop', ...args]];
  return new Promise((resolve) =>
    execFile(
      cmd as string,
      argv as string[],
      { env: as ? otherUserEnv({ CORTEX_RUNTIME_DIR: runtimeDir }) : { ...process.env, CORTEX_RUNTIME_DIR: runtimeDir } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

async function startAgent(t: Test, runtimeDir: string) {
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'sock',
    default_mode: 'm',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    cortex_llm: { type: 'WalkerLLM' },
    safety: { deadman_seconds: 600, estop_socket: { group: GROUP } },
    modes: {
      m: {
        display_name: 'm',
        description: 'm',
        system_prompt_base: 'm',
        hertz: 20,
        agent_inputs: [{ type: 'TextInput', config: { source: 'stdin', descriptor: 'Voice' } }],
        agent_actions: [{ name: 'move', llm_label: 'move', connector: 'console' }],
      },
    },
  });
  const loaded = { file: 'x', configName: 'sock', legacy: false, config, apiKey: '', addresses: {}, warnings: [] } as unknown as LoadedConfig;
  const plugins = await resolvePlugins(withPlugins(builtinPlugins, { llms: [walker] }), config);
  const lines: string[] = [];
  const agent = new Agent({
    loaded,
    plugins,
    logger: createLogger({ level: 'silent', pretty: false }),
    stateDir: mkdtempSync(join(tmpdir(), 'cortexd-sock-state-')),
    memory: false,
    runtimeDir,
    write: (l) => lines.push(l),
    closeBudgetMs: 2000,
  });
  const events: AgentEvent[] = [];
  agent.bus.events$.subscribe((e) => events.push(e));
  t.teardown(async () => {
    agent.stop('test over');
    await agent.done;
  });
  agent.start();
  const until = async <T>(what: string, fn: () => T | undefined | false, ms = 10_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = fn();
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return { agent, events, lines, until };
}

requireBuild();
t.test('cortexd estop latches through the socket, --status reads it, --release frees it; only root and the group get in', async (t) => {
  // The parents must be searchable by anyone, so that only the socket's own mode decides.
  const base = mkdtempSync(join(tmpdir(), 'cortexd-estop-'));
  chmodSync(base, 0o755);
  const runtimeDir = join(base, 'run');
  const socket = join(runtimeDir, 'estop-sock.sock');
  const { agent, events, lines, until } = await startAgent(t, runtimeDir);
  await until('the socket', () => {
    try {
      return statSync(socket).isSocket();
    } catch {
      return false;
    }
  });
  const st = statSync(socket);
  t.equal(st.mode & 0o777, 0o660, 'socket mode 0660');
  t.equal(st.gid, GROUP, 'socket group: the service group');
  t.equal(statSync(runtimeDir).mode & 0o777, 0o750, 'its directory 0750');

  await until('a tick', () => events.some((e) => e.type === 'tick'));
  agent.pushText('go');
  await until('the move printed', () => lines.includes('[move] walk forward'));

  const pressed = await estop(['--socket', socket, '--reason', 'person in the way']);
  t.equal(pressed.code, 0, pressed.stderr);
  t.match(pressed.stdout, /OK latched/);
  t.match(await until('the estop event', () => events.find((e): e is Ev<'safety'> => e.type === 'safety' && e.kind === 'estop')), {
    source: 'socket',
    reason: 'person in the way',
  });
  await until('the console stand still', () => lines.includes('[move] stand still'));
  t.equal(agent.safetyStatus().estop?.reason, 'person in the way');

  const status = await estop(['--socket', socket, '--status']);
  t.match(JSON.parse(status.stdout.slice(status.stdout.indexOf('OK ') + 3)), {
    estop: { source: 'socket', reason: 'person in the way', at: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/ },
    motion: 'still',
  });

  if (asRoot) {
    const stranger = await estop(['--socket', socket, '--release'], { uid: NOBODY, groups: [], main: readableCli(t) });
    t.equal(stranger.code, 1, 'another user is refused');
    t.match(stranger.stderr, /permission denied: only root and members of the service group/);
    t.ok(agent.safetyStatus().estop, 'still latched');
    const member = await estop(['--socket', socket, '--release'], { uid: NOBODY, groups: [GROUP], main: readableCli(t) });
    t.equal(member.code, 0, member.stderr);
    t.match(member.stdout, /OK released/);
  } else {
    t.comment('not root (or no setpriv): the check with other users is left out');
    t.equal((await estop(['--socket', socket, '--release'])).code, 0);
  }
  t.equal(agent.safetyStatus().estop, null);
  const again = await estop(['--socket', socket, '--release']);
  t.equal(again.code, 1, 'releasing the one agent asked for, with nothing latched, fails');
  t.match(again.stdout, /ERR no emergency stop is latched/);
  const all = await estop(['--release'], undefined, runtimeDir);
  t.equal(all.code, 0, 'releasing every agent: none latched is not a failure');
  t.equal(all.stdout, `agent sock (${socket}): nothing latched\n`, 'each agent named');
});

t.test('a second agent does not take over a socket that a running agent listens on; a missing socket is a clear error', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'cortexd-estop-'));
  const runtimeDir = join(base, 'run');
  const first = await startAgent(t, runtimeDir);
  await first.until('the socket', () => {
    try {
      return statSync(join(runtimeDir, 'estop-sock.sock')).isSocket();
    } catch {
      return false;
    }
  });
  const second = await startAgent(t, runtimeDir);
  const err = await second.until('the refusal', () => second.events.find((e): e is Ev<'error'> => e.type === 'error' && e.source === 'safety'));
  t.match(err.message, /e-stop socket .*estop-sock\.sock unavailable: another agent listens on it/);
  t.equal((await estop(['--socket', join(runtimeDir, 'estop-sock.sock')])).code, 0, 'the first still answers');
  const none = await estop(['--socket', join(base, 'nothing.sock')]);
  t.equal(none.code, 1);
  t.match(none.stderr, /nothing\.sock: no agent listens there \(is it running\?\)/);
});
