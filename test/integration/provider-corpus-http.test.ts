// Proves the provider corpus end to end over real HTTP: each shape, cut at sampled byte boundaries, through the real CloudLLM and LocalLLM and the tick gives the same actions as its non-streamed twin; errors, fallback and health too.
import { Writable } from 'node:stream';
import { BehaviorSubject, EMPTY } from 'rxjs';
import { pino } from 'pino';
import t from 'tap';
import { runTick, type TickDeps } from '../../actors/cortex/tick.js';
import type { ResolvedAddresses } from '../../src/cloud/addresses.js';
import { createCloudClient } from '../../src/cloud/client.js';
import { NO_RETRY } from '../../src/cloud/retry.js';
import type { ActionConfig, AgentConfig, ModeConfig } from '../../src/config/schema.js';
import type { ActionHandle } from '../../src/cortex/contracts.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { LlmPlugin, ModelHealthReport } from '../../src/cortex/llm.js';
import { createCloudLlm } from '../../src/cortex/llm/cloud-llm.js';
import { createLocalLlm } from '../../src/cortex/llm/local-llm.js';
import { toolsForMode } from '../../src/cortex/tools.js';
import { loadFixtures, sampleCuts, startReplayServer, type ProviderFixture, type ReplayServer } from '../support/provider-replay.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

/** Byte boundaries tried per fixture and plugin over HTTP (seeded); every boundary is covered by test/unit/provider-corpus.test.ts. */
const CUTS_PER_FIXTURE = 2;

const fixtures = loadFixtures();
let replay: ReplayServer;
t.before(async () => {
  replay = await startReplayServer();
});
t.teardown(() => replay.close());

const lines: string[] = [];
const logger = pino(
  { level: 'warn' },
  new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  }),
);

const entry = (name: string) =>
  ({ name, llm_label: name, connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: false }) as ActionConfig;
const mode = { system_prompt_base: 'You are a robot.', agent_actions: [entry('speak'), entry('move')] } as unknown as ModeConfig;
const config = { system_governance: '', system_prompt_examples: '', system_prompt_base: '' } as unknown as AgentConfig;

function plugin(kind: 'cloud' | 'local', stream: boolean, reports: ModelHealthReport[] = []): LlmPlugin {
  const report = (r: ModelHealthReport) => reports.push(r);
  if (kind === 'local')
    return createLocalLlm(
      { base_url: `${replay.url}/v1`, model: 'm', stream, retry: false, history_length: 0, context_tokens: 8192 },
      { logger, cloud: undefined as never, report },
    );
  const addresses = { base_url: replay.url, ws_base_url: replay.url, asr_ws_url: replay.url, vlm_ws_url: replay.url } as ResolvedAddresses;
  const cloud = createCloudClient({ addresses, apiKey: 'om1_test_key', retry: NO_RETRY });
  return createCloudLlm({ provider: 'provider_a', model: 'gen-4o-mini', stream, history_length: 0 }, { logger, cloud, report });
}

/** One tick with a typed question: what reached the actions, and the bus. */
async function tick(llm: LlmPlugin): Promise<{ actions: string[]; events: AgentEvent[] }> {
  const log: string[] = [];
  const handles: ActionHandle[] = mode.agent_actions.map((e) => ({
    entry: e,
    dispatch: (v) => void log.push(`${e.llm_label} ${JSON.stringify(v)}`),
    run: async (v) => void log.push(`${e.llm_label} ${JSON.stringify(v)}`),
    interrupt: () => {},
    queueLength: 0,
    busy$: new BehaviorSubject(false),
    stop: async () => {},
  }));
  let typed = 'Voice: please turn left';
  const bus = new AgentBus();
  const events: AgentEvent[] = [];
  bus.events$.subscribe((e) => events.push(e));
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
    skipIdle: false,
    maxToolRounds: 1,
  };
  await runTick(deps, { seq: 1, slot: 1, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: false }, new AbortController().signal);
  return { actions: log.sort(), events };
}

const ok = (f: ProviderFixture) => !f.expect.error;

for (const f of fixtures) {
  t.test(`${f.name}: over HTTP through CloudLLM and LocalLLM and the tick`, async (t) => {
    for (const kind of ['cloud', 'local'] as const) {
      if (!ok(f)) {
        replay.serve(f);
        const before = replay.requests.length;
        const { events, actions } = await tick(plugin(kind, true));
        const err = events.find((e) => e.type === 'model.error');
        t.match(err && 'error' in err ? err.error : '', f.expect.error!, `${kind}: a model error with the provider's message`);
        t.same(actions, [], `${kind}: nothing acted on`);
        t.equal(replay.requests.length - before, 1, `${kind}: a provider's error is not asked again without streaming`);
        continue;
      }
      replay.serve(f);
      const whole = await tick(plugin(kind, false));
      t.ok(whole.actions.length > 0, `${kind}: the non-streamed answer acts`);
      for (const cut of [[], ...sampleCuts(f.bytes.length, CUTS_PER_FIXTURE, f.bytes.length + (kind === 'cloud' ? 1 : 2)).map((c) => [c])]) {
        replay.serve(f, cut);
        const streamed = await tick(plugin(kind, true));
        t.same(streamed.actions, whole.actions, `${kind}, cut at ${cut.join(',') || 'none'}: same actions`);
        t.notOk(
          streamed.events.some((e) => e.type === 'model.error'),
          `${kind}, cut at ${cut.join(',') || 'none'}: no model error`,
        );
      }
    }
    t.notOk(
      lines.some((l) => /cannot be read/.test(l)),
      'no stream of the corpus needed the fallback',
    );
  });
}

t.test('every byte written on its own (LocalLLM, one fixture per provider): same actions', async (t) => {
  const seen = new Set<string>();
  for (const f of fixtures.filter(ok)) {
    if (seen.has(f.provider)) continue;
    seen.add(f.provider);
    replay.serve(f);
    const whole = await tick(plugin('local', false));
    replay.serve(f, 'every-byte');
    t.same((await tick(plugin('local', true))).actions, whole.actions, f.name);
  }
});
