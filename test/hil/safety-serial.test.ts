// HIL: the safety governor against a motor controller on a socat pseudo-terminal: e-stop sentence, dead-man timer, a model that hangs mid-answer, SIGTERM.
import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort, ReadlineParser } from 'serialport';
import { Agent } from '../../actors/agent/agent.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import { AgentConfig, type LoadedConfig } from '../../src/config/schema.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { createCloudClient } from '../../src/cloud/client.js';
import type { ResolvedAddresses } from '../../src/cloud/addresses.js';
import { NO_RETRY } from '../../src/cloud/retry.js';
import { sendJson, startCloudPeer } from '../support/cloud-peer.js';
import { createLogger } from '../../src/log.js';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { requireBuild } from '../helpers/requires.js';
import { until } from '../helpers/wait.js';
import { scriptedLlm } from '../helpers/plugins.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

/** A socat pty pair: the robot's end and the motor controller's end. */
async function ptyPair(t: Test): Promise<{ robot: string; controller: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-safety-pty-'));
  const robot = join(dir, 'robot');
  const controller = join(dir, 'controller');
  const proc: ChildProcess = spawn('socat', [`pty,raw,echo=0,link=${robot}`, `pty,raw,echo=0,link=${controller}`], { stdio: 'ignore' });
  t.teardown(() => void proc.kill('SIGTERM'));
  await until('the pty pair', () => existsSync(robot) && existsSync(controller), 5000);
  return { robot, controller };
}

/** The motor controller: records every line, answers `OK` to MOVE lines except the ones `silent` names (long moves in flight). */
function controller(t: Test, path: string, silent: string[] = []): Promise<{ got: string[]; send: (line: string) => void }> {
  return new Promise((resolve, reject) => {
    const got: string[] = [];
    const port = new SerialPort({ path, baudRate: 115200 }, (err) => (err ? reject(err) : resolve({ got, send: (l) => void port.write(`${l}\n`) })));
    port.pipe(new ReadlineParser({ delimiter: '\n' })).on('data', (line: string) => {
      got.push(line);
      if (line.startsWith('MOVE ') && !silent.includes(line)) port.write('OK\n');
    });
    t.teardown(() => new Promise<void>((r) => (port.isOpen ? port.close(() => r()) : r())));
  });
}

/** A model that reads the typed line: "go" walks forward, "turn" turns left, "hang" never answers (until aborted). */
const scripted = scriptedLlm('ScriptedLLM', (user, signal, { call, nothing }) => {
  if (/\bgo\b/.test(user)) return call('move', { action: 'walk forward' });
  if (/\bturn\b/.test(user)) return call('move', { action: 'turn left' });
  if (/\bhang\b/.test(user)) return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  return nothing;
});
const registry = withPlugins(builtinPlugins, { llms: [scripted] });

function loadedConfig(robot: string, safety: Record<string, unknown>, llm: Record<string, unknown> = { type: 'ScriptedLLM', config: {} }): LoadedConfig {
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'safety',
    default_mode: 'drive',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    cortex_llm: llm,
    modes: {
      drive: {
        display_name: 'Drive',
        description: 'd',
        system_prompt_base: 'you drive',
        hertz: 20,
        agent_inputs: [{ type: 'TextInput', config: { source: 'stdin', descriptor: 'Voice' } }],
        agent_actions: [{ name: 'move', llm_label: 'move', connector: 'serial', config: { path: robot, ack_timeout_seconds: 5 } }],
      },
    },
    safety: { estop_socket: { enabled: false }, ...safety },
  });
  return { file: 'x', configName: 'safety', legacy: false, config, apiKey: '', addresses: {}, warnings: [] } as unknown as LoadedConfig;
}

/** Runs an agent in process; `waitFor` resolves with the first bus event (since start) matching. */
async function run(t: Test, loaded: LoadedConfig, extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
  const plugins = await resolvePlugins(registry, loaded.config);
  const logger = createLogger({ level: 'silent', pretty: false });
  const agent = new Agent({
    loaded,
    plugins,
    logger,
    stateDir: mkdtempSync(join(tmpdir(), 'cortexd-safety-state-')),
    memory: false,
    runtimeDir: false,
    shutdownBudgetMs: 2000,
    closeBudgetMs: 2000,
    ...extra,
  });
  const events: AgentEvent[] = [];
  agent.bus.events$.subscribe((e) => events.push(e));
  t.teardown(async () => {
    agent.stop('test over');
    await agent.done;
  });
  agent.start();
  const waitFor = <T extends AgentEvent>(what: string, pred: (e: AgentEvent) => boolean, ms = 10_000) =>
    until(what, () => events.find(pred) as T | undefined, ms);
  await waitFor('the first tick', (e) => e.type === 'tick');
  return { agent, events, waitFor };
}

const failedMove = (e: AgentEvent): e is Ev<'action'> => e.type === 'action' && e.label === 'move' && e.state === 'failed';

requireBuild();
t.test('an e-stop sentence on the serial line stops a running move (STOP on the wire) and refuses later ones until released', async (t) => {
  const pty = await ptyPair(t);
  // "MOVE turn left" is a long move the controller has not acknowledged yet: the command is in flight.
  const peer = await controller(t, pty.controller, ['MOVE turn left']);
  const { agent, events, waitFor } = await run(t, loadedConfig(pty.robot, { deadman_seconds: 600, estop_serial: { path: pty.robot } }));

  // A move that the controller accepted (OK) and is carrying out.
  agent.pushText('go');
  await until('MOVE walk forward on the wire', () => peer.got.includes('MOVE walk forward'));
  await waitFor('walk forward done', (e) => e.type === 'action' && e.state === 'done');
  peer.send('ESTOP');
  await until('STOP after ESTOP', () => peer.got.includes('STOP'));
  const estop = await waitFor<Ev<'safety'>>('the estop event', (e) => e.type === 'safety' && e.kind === 'estop');
  t.match(estop, { source: 'serial', reason: /ESTOP on / });
  t.match(await waitFor<Ev<'safety'>>('the stop event', (e) => e.type === 'safety' && e.kind === 'stop'), { cause: 'estop' });
  t.same(agent.safetyStatus().estop?.source, 'serial');

  // Later motion is refused with the reason, and nothing reaches the wire.
  const before = peer.got.length;
  agent.pushText('go');
  const refused = await waitFor<Ev<'action'>>('a refused move', failedMove);
  t.match(refused.error, /refused by the safety governor: emergency stop latched \(serial: ESTOP on .*\)/);
  const prompt = await waitFor<Ev<'prompt'>>('a prompt after the e-stop', (e) => e.type === 'prompt' && e.at >= estop.at);
  t.match(prompt.prompt, /SAFETY: motion is disabled \(emergency stop latched by serial/, 'the model is told');
  t.same(peer.got.slice(before), [], 'no motion command on the wire while latched');

  // Released by a person: motion is accepted again; a move in flight is interrupted by a second press.
  t.same(await agent.release('test'), { ok: true });
  t.match(await waitFor('release event', (e) => e.type === 'safety' && e.kind === 'release'), { source: 'test' });
  t.same(await agent.release('test'), { ok: false, reason: 'no emergency stop is latched' });
  agent.pushText('turn');
  await until('MOVE turn left on the wire', () => peer.got.includes('MOVE turn left'));
  await waitFor('turn left running', (e) => e.type === 'action' && e.state === 'running' && (e.value as { action: string }).action === 'turn left');
  peer.send('ESTOP');
  const interrupted = await waitFor<Ev<'action'>>('the interrupted move', (e) => e.type === 'action' && e.state === 'interrupted');
  t.match(interrupted.error, /stopped by the safety governor: emergency stop \(serial\)/);
  await until('a second STOP', () => peer.got.filter((l) => l === 'STOP').length === 2);
  t.same(peer.got, ['MOVE walk forward', 'STOP', 'MOVE turn left', 'STOP']);
  t.ok(events.filter((e) => e.type === 'safety' && e.kind === 'estop').length === 2);
});

t.test('the dead-man timer sends STOP when no motion command arrives for the configured time', async (t) => {
  const pty = await ptyPair(t);
  const peer = await controller(t, pty.controller);
  const { agent, waitFor } = await run(t, loadedConfig(pty.robot, { deadman_seconds: 0.3 }));
  agent.pushText('go');
  await until('MOVE walk forward', () => peer.got.includes('MOVE walk forward'));
  await until('STOP from the dead-man timer', () => peer.got.includes('STOP'));
  const stop = await waitFor<Ev<'safety'>>('the stop event', (e) => e.type === 'safety' && e.kind === 'stop');
  t.match(stop, { cause: 'deadman', reason: /no motion command for 0\.3 s/, label: 'move', value: 'walk forward' });
  t.same(peer.got, ['MOVE walk forward', 'STOP']);
  t.equal(agent.safetyStatus().motion, 'still');
  // Commands that keep arriving keep it moving: a new one is accepted at once.
  agent.pushText('turn');
  await until('MOVE turn left', () => peer.got.includes('MOVE turn left'));
});

for (const stream of [false, true]) {
  t.test(`a model that hangs mid-answer stops motion (${stream ? 'a streamed answer' : 'a JSON answer'} from a peer that stops writing)`, async (t) => {
    const pty = await ptyPair(t);
    const peer = await controller(t, pty.controller);
    const cloudPeer = await startCloudPeer();
    t.teardown(() => cloudPeer.close());
    const path = '/api/core/provider_a/chat/completions';
    const call = { id: 'call_1', type: 'function', function: { name: 'move', arguments: '{"action":"walk forward"}' } };
    // First answer: walk forward. Second: the status line, headers and part of the body, then nothing.
    cloudPeer.once('POST', path, (_req, res) => {
      if (!stream) {
        sendJson(res, 200, {
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'gen-4o-mini',
          choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [call] } }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        });
        return;
      }
      const chunk = (choice: unknown, extra: Record<string, unknown> = {}) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gen-4o-mini', choices: [choice], ...extra })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, ...call }] }, finish_reason: null }));
      res.end(
        `${chunk({ index: 0, delta: {}, finish_reason: 'tool_calls' }, { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}data: [DONE]\n\n`,
      );
    });
    cloudPeer.route('POST', path, (_req, res) => {
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `data: ${JSON.stringify({ id: 'c2', object: 'chat.completion.chunk', created: 1, model: 'gen-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: 'I will' }, finish_reason: null }] })}\n\n`,
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      res.write('{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"I will');
    });
    const cloud = createCloudClient({ addresses: { base_url: cloudPeer.url } as ResolvedAddresses, apiKey: 'test-key', retry: NO_RETRY });
    const loaded = loadedConfig(
      pty.robot,
      { deadman_seconds: 600, model_stall_seconds: 0.5 },
      { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', timeout_seconds: 120, stream } },
    );
    const { agent, waitFor } = await run(t, loaded, { cloud });
    agent.pushText('walk forward please');
    await until('MOVE walk forward', () => peer.got.includes('MOVE walk forward'));
    agent.pushText('and now?');
    await until('the second chat request', () => cloudPeer.requests.length >= 2);
    await until('STOP after the model stalled', () => peer.got.includes('STOP'));
    const stop = await waitFor<Ev<'safety'>>('the stop event', (e) => e.type === 'safety' && e.kind === 'stop');
    t.match(stop, { cause: 'model_stall', reason: /model: no answer for 0\.5 s \(stalled\)/ });
    t.same(peer.got, ['MOVE walk forward', 'STOP']);
    t.match(agent.safetyStatus().faults, [/model: no answer/]);
  });
}

t.test('SIGTERM sends STOP before the process exits', async (t) => {
  const pty = await ptyPair(t);
  const peer = await controller(t, pty.controller);
  const wd = workDir();
  const file = wd.file('safety.json5');
  writeFileSync(
    file,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'safety',
      default_mode: 'drive',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: 'openmind_free',
      system_governance: '',
      service: { base_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini' } },
      // The dead-man timer is far away: the STOP must come from the shutdown.
      safety: { deadman_seconds: 600, estop_socket: { enabled: false } },
      modes: {
        drive: {
          display_name: 'Drive',
          description: 'd',
          system_prompt_base: 'you drive',
          hertz: 5,
          agent_inputs: [{ type: 'TextInput', config: { source: 'socket', path: wd.socket, descriptor: 'Voice' } }],
          agent_actions: [{ name: 'move', llm_label: 'move', connector: 'serial', config: { path: pty.robot } }],
        },
      },
    }),
  );
  const agent = startAgent(file, wd.state);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await typeLines(wd.socket, ['turn left']);
  await until('MOVE turn left on the wire', () => peer.got.includes('MOVE turn left'), 30_000);
  await agent.waitFor((e) => e.type === 'action' && e.state === 'done', 10_000, 'the move done');
  let stopSeenBeforeExit: boolean | undefined;
  void agent.exited.then(() => (stopSeenBeforeExit ??= peer.got.includes('STOP')));
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'clean exit');
  t.equal(stopSeenBeforeExit, true, 'STOP reached the controller before the process ended');
  t.same(peer.got, ['MOVE turn left', 'STOP']);
  t.ok(
    agent.events.some((e) => e.type === 'safety' && e.kind === 'stop' && e.cause === 'stopping'),
    'the stop is on the bus with its cause',
  );
});
