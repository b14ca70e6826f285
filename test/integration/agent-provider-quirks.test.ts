// Every provider quirk with a real agent process: a typed question in, the model's stream replayed from the corpus, the action out, and no warning; a provider error mid-stream is a model error with its words, and the next streamed move still runs.
import { writeFileSync } from 'node:fs';
import t from 'tap';
import type { AgentEvent } from '../../src/cortex/events.js';
import { built, startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { loadFixtures, startReplayServer } from '../support/provider-replay.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

if (!built) {
  t.fail('dist/ is missing: run `npm run build` before the integration tests');
} else {
  // In the corpus' order (by name), where errors are not last: a failed call pauses motion until the model
  // answers again, and a streamed answer says so (`model.progress`) before it dispatches its move.
  const fixtures = loadFixtures();
  const moves = (f: (typeof fixtures)[number]) => f.expect.calls?.some((c) => c.name === 'move') ?? false;
  const afterError = fixtures.filter((f, i) => i > 0 && fixtures[i - 1]!.expect.error && moves(f));
  t.ok(afterError.length >= 2, `streamed moves right after a failed call: ${afterError.map((f) => f.name).join(', ')}`);
  const replay = await startReplayServer();
  t.teardown(() => replay.close());
  const w = workDir();
  const config = w.file('quirks.json5');
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.2',
      hertz: 2,
      name: 'quirks',
      api_key: 'key_test_quirks123456',
      system_prompt_base: 'You are a robot. Answer with tool calls.',
      system_governance: 'Be safe.',
      cortex_llm: { type: 'LocalLLM', config: { base_url: `${replay.url}/v1`, model: 'm', history_length: 0, retry: false, context_tokens: 8192 } },
      agent_inputs: [{ type: 'TextInput', config: { source: 'socket', path: w.socket } }],
      // One move per question, questions in quick succession: the motion limits are not what this test is about.
      safety: { rate_limit: { commands: 100, per_seconds: 1 }, deadman_seconds: 600 },
      agent_actions: [
        { name: 'speak', llm_label: 'speak', connector: 'console' },
        { name: 'move', llm_label: 'move', connector: 'console' },
      ],
    }),
  );
  const agent = startAgent(config, w.state, ['--for', '120s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'agent.started', 30_000, 'the agent to start');

  let n = 0;
  for (const [i, f] of fixtures.entries()) {
    t.test(`${f.name} (${f.provider})`, async (t) => {
      replay.serve(f);
      const from = agent.events.length;
      const stderrFrom = agent.stderr().length;
      await typeLines(w.socket, [`question ${++n}: please turn left`]);
      const after = (pred: (e: AgentEvent) => boolean) => (e: AgentEvent) => agent.events.indexOf(e) >= from && pred(e);
      if (f.expect.error) {
        const err = await agent.waitFor<Ev<'model.error'>>(
          after((e) => e.type === 'model.error'),
          20_000,
          'the model error',
        );
        t.match(err.error, f.expect.error, "the provider's message");
        // Its warnings (the failed call; the stop of the move still running) are on stderr before the next
        // question, so the next fixture's "no warning" sees only its own.
        // A move since the last failed call still runs (the dead-man timer is long): this failed call stops it.
        const since = fixtures.slice(0, i).findLastIndex((g) => g.expect.error) + 1;
        const moving = fixtures.slice(since, i).some(moves);
        if (moving) {
          const stop = await agent.waitFor<Ev<'safety'>>(
            after((e) => e.type === 'safety' && e.kind === 'stop'),
            20_000,
            'the stop',
          );
          t.match(stop.reason, /the model call failed/, 'the failed call stopped the move still running');
        }
        const expected = [/model call failed/, ...(moving ? [/safety: stop sent \(service\)/] : [])];
        const deadline = Date.now() + 10_000;
        while (!expected.every((re) => re.test(agent.stderr().slice(stderrFrom)))) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for the warnings of the failed call; stderr: ${agent.stderr().slice(stderrFrom)}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        return;
      }
      const answer = await agent.waitFor<Ev<'model.answer'>>(
        after((e) => e.type === 'model.answer'),
        20_000,
        'the answer',
      );
      const want = f.expect.calls?.length ? f.expect.calls.map((c) => c.name) : ['speak'];
      for (const label of want) {
        await agent.waitFor(
          after((e) => e.type === 'action' && e.label === label && e.state === 'done'),
          20_000,
          `the ${label} action done`,
        );
      }
      t.same(
        answer.tool_calls.map((c) => [c.name, c.arguments]),
        (f.expect.calls ?? []).map((c) => [c.name, c.arguments]),
        'the answer the fixture means',
      );
      t.notOk(
        agent.events.slice(from).some((e) => e.type === 'model.error' || e.type === 'model'),
        'no model error, no fallback',
      );
      t.notOk(
        agent.events.slice(from).some((e) => e.type === 'safety' && e.kind === 'refused'),
        'no motion refused (not even right after a failed call)',
      );
      t.notMatch(agent.stderr().slice(stderrFrom), /"level":40|WARN|warn/, 'no warning');
    });
  }
}
