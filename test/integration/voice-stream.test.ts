// A streamed answer from a real loopback model through LocalLLM, the tick and the real speak action (espeak-ng to a file speaker): order, early actions, barge-in.
import { requireCommands } from '../helpers/requires.js';
import { startGovernor } from '../helpers/governor.js';
import t, { type Test } from 'tap';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY } from 'rxjs';
import { pino } from 'pino';
import { runTick, type TickDeps } from '../../actors/cortex/tick.js';
import { createActionHandle } from '../../actors/actions/action.js';
import { builtinPlugins, resolvePlugins } from '../../actors/plugin-registry.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { ActionConfig, AgentConfig, ModeConfig } from '../../src/config/schema.js';
import { toolsForMode } from '../../src/cortex/tools.js';
import { createLocalLlm } from '../../src/cortex/llm/local-llm.js';
import type { ChatLlm } from '../../src/cortex/llm/chat-plugin.js';
import type { AnswerObserver } from '../../src/cortex/llm.js';
import { startScriptedUpstream } from '../support/scripted-upstream.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;
requireCommands(['espeak-ng']);

const logger = pino({ level: 'silent' });

async function rig(t: Test, script: Parameters<typeof startScriptedUpstream>[0]) {
  const upstream = await startScriptedUpstream(script);
  t.teardown(() => upstream.close());
  const dir = mkdtempSync(join(tmpdir(), 'voice-stream-'));
  const speech = join(dir, 'speech');
  const actions: ActionConfig[] = [
    {
      name: 'speak',
      llm_label: 'speak',
      connector: 'local_tts',
      implementation: 'passthrough',
      exclude_from_prompt: false,
      config: { speaker: { binding: 'file', dir: speech, realtime: true } },
    },
    { name: 'move', llm_label: 'move', connector: 'console', implementation: 'passthrough', exclude_from_prompt: false, config: {} },
  ];
  const mode = { system_prompt_base: 'robot', agent_actions: actions, agent_inputs: [], simulators: [], mcp_servers: [] } as unknown as ModeConfig;
  const config = { system_governance: '', system_prompt_examples: '', system_prompt_base: '', modes: { m: mode } } as unknown as AgentConfig;
  const plugins = await resolvePlugins(builtinPlugins, { ...config, cortex_llm: { type: 'LocalLLM', config: {} } } as unknown as AgentConfig);
  const bus = new AgentBus();
  const events: AgentEvent[] = [];
  bus.events$.subscribe((e) => events.push(e));
  // Motion passes a safety governor, as in an agent; its dead-man timer is out of the way here.
  const governor = startGovernor({ deadman_seconds: 600 }, { bus });
  t.teardown(() => governor.stop());
  const handles = actions.map((entry) =>
    createActionHandle(entry, { logger, bus, mode: 'm', stateDir: dir, write: () => {}, plugins }, { safety: governor.actor }),
  );
  t.teardown(() => Promise.all(handles.map((h) => h.stop())));
  const llm = createLocalLlm({ base_url: upstream.baseUrl, history_length: 3, retry: false }, { logger, cloud: undefined as never }) as ChatLlm;
  t.teardown(() => llm.stop());
  let typed = 'Voice: what is your name';
  const deps: TickDeps = {
    config,
    modeName: 'm',
    mode,
    inputs: [
      {
        finals: [],
        plugin: {
          type: 'TextInput',
          descriptor: 'Voice',
          listen: () => EMPTY,
          poll: async () => undefined,
          rawToText: () => undefined,
          formattedLatestBuffer: () => {
            const out = typed;
            typed = '';
            return out || undefined;
          },
          stop: async () => {},
        },
      },
    ],
    handles: () => handles,
    llm,
    toolsForMode,
    bus,
    logger,
    keywords: () => false,
    skipIdle: true,
    maxToolRounds: 1,
  };
  const waitFor = <T extends AgentEvent>(pred: (e: AgentEvent) => boolean, what: string, ms = 20_000): Promise<T> =>
    new Promise((resolve, reject) => {
      const hit = events.find(pred);
      if (hit) return resolve(hit as T);
      const timer = setTimeout(() => (sub.unsubscribe(), reject(new Error(`timed out waiting for ${what}`))), ms);
      const sub = bus.events$.subscribe((e) => pred(e) && (clearTimeout(timer), sub.unsubscribe(), resolve(e as T)));
    });
  const tick = () =>
    runTick(deps, { seq: 1, slot: -1, dueAt: Date.now(), startedAt: Date.now(), latenessMs: 0, skipped: 0, wake: true }, new AbortController().signal);
  return { upstream, handles, llm, events, waitFor, tick, speech };
}

t.test('LocalLLM streams: tool calls complete one by one, long before the answer ends', async (t) => {
  const upstream = await startScriptedUpstream({
    toolCalls: [
      { name: 'move', arguments: { action: 'sit' } },
      { name: 'speak', arguments: { sentence: 'Hello there. I am a robot.' } },
    ],
    firstTokenMs: 20,
    tokensPerSecond: 100,
  });
  t.teardown(() => upstream.close());
  const llm = createLocalLlm({ base_url: upstream.baseUrl, history_length: 0 }, { logger, cloud: undefined as never });
  const seen: string[] = [];
  const observer: AnswerObserver = {
    firstToken: () => seen.push('first token'),
    toolCallStarted: (i, name) => seen.push(`start ${i} ${name}`),
    toolCallProgress: (i, partial) => {
      const s = (partial as { sentence?: string }).sentence;
      if (i === 1 && s !== undefined) seen.push(`speak so far: ${s}`);
    },
    toolCallDone: (i, call) => seen.push(`done ${i} ${JSON.stringify(call.arguments)}`),
  };
  const answer = await llm.ask({ messages: [{ role: 'user', content: 'hi' }], tools: [] }, new AbortController().signal, observer);
  t.equal(seen[0], 'first token');
  t.equal(seen[1], 'start 0 move');
  t.ok(seen.indexOf('done 0 {"action":"sit"}') < seen.indexOf('start 1 speak'), 'the move is complete before the speak call starts');
  const partials = seen.filter((s) => s.startsWith('speak so far: ')).map((s) => s.slice(14));
  t.ok(partials.length > 3, `the sentence arrived in pieces (${partials.length})`);
  t.ok(
    partials.every((p, i) => i === 0 || p.startsWith(partials[i - 1]!)),
    'each piece extends the one before',
  );
  t.equal(seen.at(-1), 'done 1 {"sentence":"Hello there. I am a robot."}');
  t.same(
    answer.toolCalls.map((c) => [c.name, c.arguments]),
    [
      ['move', { action: 'sit' }],
      ['speak', { sentence: 'Hello there. I am a robot.' }],
    ],
    'the whole answer is the same as unstreamed',
  );
  t.equal(answer.streamed, true);
  t.equal(upstream.requests[0]?.stream, true, 'the request asked for a stream');
});

t.test('a streamed turn: the move is dispatched before the speech is written; each sentence is its own clip, in order, without gaps', async (t) => {
  const sentence = 'One two three. Four five six. Seven eight nine.';
  const r = await rig(t, {
    toolCalls: [
      { name: 'move', arguments: { action: 'sit' } },
      { name: 'speak', arguments: { sentence } },
    ],
    firstTokenMs: 30,
    tokensPerSecond: 40,
  });
  await r.tick();
  const turn = await r.waitFor<Ev<'turn'>>((e) => e.type === 'turn', 'the turn');
  const at = (pred: (e: AgentEvent) => boolean) => r.events.findIndex(pred);
  const moveQueued = at((e) => e.type === 'action' && e.label === 'move' && e.state === 'queued');
  const lastSentenceQueued = at(
    (e) => e.type === 'action' && e.label === 'speak' && e.state === 'queued' && (e.value as { sentence: string }).sentence === 'Seven eight nine.',
  );
  const answer = at((e) => e.type === 'model.answer');
  t.ok(moveQueued >= 0 && moveQueued < lastSentenceQueued && moveQueued < answer, 'the move went out while the answer was still arriving');
  const done = r.events
    .filter((e): e is Ev<'action'> => e.type === 'action' && e.label === 'speak' && e.state === 'done')
    .map((e) => (e.value as { sentence: string }).sentence);
  t.same(done, ['One two three.', 'Four five six.', 'Seven eight nine.'], 'three sentences spoken in order');
  t.equal(readdirSync(r.speech).filter((f) => f.endsWith('.wav')).length, 3, 'one clip each');
  t.match(turn, { streamed: true, sentences: 3, spoken: 3, outcome: 'spoken', origin: 'request_sent' });
  t.equal(turn.gaps_ms.length, 2);
  for (const stage of ['first_token', 'first_sentence', 'first_audio_byte', 'playback_start', 'first_action'] as const)
    t.type(turn.stages_ms[stage], 'number', stage);
  t.ok(turn.stages_ms.first_action! < turn.stages_ms.playback_start! + 1000, 'the move started early');
  t.match(
    r.llm.history?.exchanges[0]?.answer,
    /\[speak \{"sentence":"One two three\. Four five six\. Seven eight nine\."\}\]/,
    'the history has the whole answer',
  );
});

t.test('a barge-in mid-sentence: playback stops, the model stream is cut, nothing more is spoken, the history keeps what was said', async (t) => {
  const sentence = 'This first sentence is being spoken now. This second one must never be heard. Nor this third one.';
  const r = await rig(t, { sentence, firstTokenMs: 30, tokensPerSecond: 12 });
  const speak = r.handles[0]!;
  void r.tick();
  await r.waitFor((e) => e.type === 'action' && e.label === 'speak' && e.state === 'running', 'the first sentence playing');
  const cut = r.events.length;
  speak.interrupt();
  const turn = await r.waitFor<Ev<'turn'>>((e) => e.type === 'turn', 'the turn');
  t.match(turn, { outcome: 'interrupted', spoken: 0, streamed: true });
  const deadline = Date.now() + 5000;
  while (!r.upstream.requests[0]?.aborted && Date.now() < deadline) await new Promise((res) => setImmediate(res));
  t.ok(r.upstream.requests[0]?.aborted, 'the model stream was closed before its end');
  t.ok(r.upstream.requests[0]!.tokensSent < Math.ceil(JSON.stringify({ sentence }).length / 4), `after ${r.upstream.requests[0]!.tokensSent} tokens`);
  const after = r.events.slice(cut).filter((e): e is Ev<'action'> => e.type === 'action' && e.label === 'speak');
  t.notOk(
    after.some((e) => e.state === 'running' || e.state === 'done'),
    'nothing started or finished playing after the interrupt',
  );
  t.ok(
    after.some((e) => e.state === 'interrupted'),
    'the sentence playing was interrupted',
  );
  t.ok(readdirSync(r.speech).filter((f) => f.endsWith('.wav')).length <= 1, 'at most the clip that was playing was ever played');
  const remembered = r.llm.history?.exchanges[0]?.answer ?? '';
  t.match(
    remembered,
    /^\[speak \{"sentence":""\}\] \(interrupted; not said: This first sentence is being spoken now\.\)$/,
    'the history says nothing was said, and what was cut',
  );
  t.notMatch(remembered, /second one must never/, 'and keeps nothing the model did not get to say');
});
