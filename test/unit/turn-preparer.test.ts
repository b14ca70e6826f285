// Proves the turn prepared while the person speaks: the prompt taken when the final says the same, the speculative request adopted with what it streamed, and dropped (aborted, counted) when the final differs.
import t from 'tap';
import { pino } from 'pino';
import { BehaviorSubject, EMPTY } from 'rxjs';
import { TurnPreparer, type AssembledTurn } from '../../actors/cortex/speculation.js';
import { assembleTurn, runTick, type Assembled, type TickDeps, type TickInput } from '../../actors/cortex/tick.js';
import { AgentBus } from '../../src/cortex/events.js';
import type { ActionHandle } from '../../src/cortex/contracts.js';
import type { ActionConfig, AgentConfig, ModeConfig } from '../../src/config/schema.js';
import { toolsForMode } from '../../src/cortex/tools.js';
import type { AnswerObserver, LlmAnswer, LlmPlugin, LlmRequest } from '../../src/cortex/llm.js';

/** A model whose answers the test releases: it streams `text` fragments to the observer, then answers. */
function heldModel() {
  const calls: Array<{ request: LlmRequest; signal: AbortSignal; observer?: AnswerObserver; answer: (text: string) => void }> = [];
  const llm: LlmPlugin = {
    type: 'held',
    ask: (request, signal, observer) =>
      new Promise<LlmAnswer>((resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        calls.push({
          request,
          signal,
          ...(observer ? { observer } : {}),
          answer: (text) => resolve({ text, toolCalls: [], model: 'held', latencyMs: 1 }),
        });
      }),
  };
  return { llm, calls };
}

const assemble = (id: string, text: string): AssembledTurn<string> => ({
  key: `${id}:${text}`,
  value: `prompt(${text})`,
  request: { messages: [{ role: 'user', content: text }], tools: [] },
});
const logger = pino({ level: 'silent' });

t.test('the prompt is prepared on a partial and taken by the tick whose texts are the same; nothing is asked early by default', async (t) => {
  const { llm, calls } = heldModel();
  let built = 0;
  const p = new TurnPreparer<string>({ llm, logger, speculative: () => false, assemble: (id, text) => (built++, assemble(id, text)) });
  p.partial('input:asr', 'what is your name');
  p.partial('input:asr', 'what is your name');
  t.equal(built, 2, 'assembled on each partial');
  t.same(p.take('input:asr:what is your name'), { value: 'prompt(what is your name)' }, 'the final with the same words takes the prepared prompt');
  t.equal(p.take('input:asr:what is your name'), undefined, 'taken once');
  t.equal(calls.length, 0, 'no model call before the final');
  t.equal(p.extraCalls, 0);
});

t.test('speculative: the request starts on the partial and the final adopts it with what already streamed', async (t) => {
  const { llm, calls } = heldModel();
  const p = new TurnPreparer<string>({ llm, logger, speculative: (id) => id === 'input:asr', assemble });
  p.partial('input:other', 'hello');
  t.equal(calls.length, 0, 'an input without the setting asks nothing early');
  p.partial('input:asr', 'what is your name');
  t.equal(calls.length, 1, 'asked on the partial');
  calls[0]!.observer?.firstToken?.(123);
  calls[0]!.observer?.text?.('I am ');
  const taken = p.take('input:asr:what is your name');
  t.ok(taken?.adopt, 'the final says the same: the early request is adopted');
  const seen: string[] = [];
  const tick = new AbortController();
  const answer = taken!.adopt!({ firstToken: (at) => seen.push(`first@${at}`), text: (f) => seen.push(f) }, tick.signal);
  calls[0]!.observer?.text?.('Pip.');
  calls[0]!.answer('I am Pip.');
  t.match(await answer, { text: 'I am Pip.' });
  t.same(seen, ['first@123', 'I am ', 'Pip.'], 'what streamed before the final is replayed, the rest forwarded');
  t.equal(calls.length, 1, 'no second call');
  t.same([p.usedCalls, p.extraCalls], [1, 0]);
});

t.test('speculative: a newer partial or a different final drops the early request (aborted, counted as an extra call)', async (t) => {
  const { llm, calls } = heldModel();
  const p = new TurnPreparer<string>({ llm, logger, speculative: () => true, assemble });
  p.partial('input:asr', 'what is');
  p.partial('input:asr', 'what is your');
  t.equal(calls.length, 2);
  t.ok(calls[0]!.signal.aborted, 'the older request is aborted');
  t.equal(p.extraCalls, 1);
  t.equal(p.take('input:asr:what is your name'), undefined, 'the final differs: nothing to take');
  t.ok(calls[1]!.signal.aborted, 'and the request on the partial is aborted');
  t.equal(p.extraCalls, 2);
  p.partial('input:asr', 'stop');
  p.drop('the mode stopped');
  t.ok(calls[2]!.signal.aborted, 'stopping the mode aborts it too');
  t.equal(p.extraCalls, 3);
});

t.test('an adopted request stops with the tick', async (t) => {
  const { llm, calls } = heldModel();
  const p = new TurnPreparer<string>({ llm, logger, speculative: () => true, assemble });
  p.partial('input:asr', 'hello');
  const tick = new AbortController();
  const answer = p.take('input:asr:hello')!.adopt!({}, tick.signal);
  tick.abort(new Error('mode exit'));
  await t.rejects(answer, { message: 'mode exit' });
  t.ok(calls[0]!.signal.aborted);
});

t.test('a tick woken by the final uses the request sent on the same partial (one model call), and asks again when the final differs', async (t) => {
  const speak = {
    name: 'speak',
    llm_label: 'speak',
    connector: 'console',
    implementation: 'passthrough',
    config: {},
    exclude_from_prompt: false,
  } as ActionConfig;
  const mode = { system_prompt_base: 'be nice', agent_actions: [speak] } as unknown as ModeConfig;
  const config = { system_governance: 'laws', system_prompt_examples: '', system_prompt_base: '' } as unknown as AgentConfig;
  const said: unknown[] = [];
  const handle: ActionHandle = {
    entry: speak,
    dispatch: (v) => void said.push(v),
    run: async (v) => void said.push(v),
    interrupt: () => {},
    queueLength: 0,
    busy$: new BehaviorSubject(false),
    stop: async () => {},
  };
  const asked: LlmRequest[] = [];
  const voice = (heard: string): TickInput => {
    let buf: string | undefined = `Voice: ${heard}`;
    return {
      plugin: {
        type: 'SpeechlabASRInput',
        descriptor: 'Voice',
        listen: () => EMPTY,
        poll: async () => undefined,
        rawToText: () => undefined,
        formattedLatestBuffer: () => {
          const out = buf;
          buf = undefined;
          return out;
        },
        bufferIf: (text) => `Voice: ${text}`,
        stop: async () => {},
      },
    };
  };
  const deps: TickDeps = {
    config,
    modeName: 'm',
    mode,
    inputs: [],
    handles: () => [handle],
    llm: {
      type: 'fake',
      ask: async (req) => (asked.push(structuredClone(req)), { text: 'I am Pip.', toolCalls: [], model: 'fake', latencyMs: 1 }),
    },
    toolsForMode,
    bus: new AgentBus(),
    logger,
    keywords: () => false,
    skipIdle: true,
    maxToolRounds: 1,
  };
  const prepared = new TurnPreparer<Assembled>({
    llm: deps.llm,
    logger,
    speculative: () => true,
    assemble: (_id, text) => assembleTurn(deps, [{ descriptor: 'Voice', text: `Voice: ${text}` }], undefined),
  });
  const req = { seq: 1, slot: -1, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: true };
  const signal = new AbortController().signal;

  prepared.partial('input:SpeechlabASRInput', 'what is your name');
  t.equal(asked.length, 1, 'asked on the partial');
  const same = await runTick({ ...deps, inputs: [voice('what is your name')], prepared }, { ...req, finals: ['what is your name'] }, signal);
  t.same(same, { calledModel: true });
  t.equal(asked.length, 1, 'the final said the same: no second call');
  t.equal(said.length, 1, 'and its answer is spoken');

  prepared.partial('input:SpeechlabASRInput', 'what is your');
  t.equal(asked.length, 2);
  await runTick({ ...deps, inputs: [voice('what is your name')], prepared }, { ...req, seq: 2, finals: ['what is your name'] }, signal);
  t.equal(asked.length, 3, 'the final differs: asked again with it');
  t.match(asked[2]!.messages.at(-1)?.content, /what is your name/);
  t.same([prepared.usedCalls, prepared.extraCalls], [1, 1], 'one request used, one extra');
  t.equal(said.length, 2, 'only the final request is spoken');
});
