// Summaries in batches: over 50 answers a model with history makes at most 1 + 1/history_length calls per answer, counted at a real loopback server.
import t from 'tap';
import { pino } from 'pino';
import { SUMMARY_INSTRUCTION } from '../../src/cortex/history.js';
import { createLocalLlm } from '../../src/cortex/llm/local-llm.js';
import type { ChatLlm } from '../../src/cortex/llm/chat-plugin.js';
import { startScriptedUpstream } from '../support/scripted-upstream.js';

for (const stream of [true, false]) {
  t.test(`50 answers, history_length 5 (${stream ? 'streamed' : 'not streamed'}): at most 60 model calls, the summary in the prompt`, async (t) => {
    const upstream = await startScriptedUpstream({
      firstTokenMs: 1,
      tokensPerSecond: 5000,
      answer: (req) =>
        req.messages[0]?.content === SUMMARY_INSTRUCTION
          ? { text: 'They talked about numbers.' }
          : { toolCalls: [{ name: 'speak', arguments: { sentence: 'ok' } }] },
    });
    t.teardown(() => upstream.close());
    const llm = createLocalLlm(
      { base_url: upstream.baseUrl, history_length: 5, stream },
      { logger: pino({ level: 'silent' }), cloud: undefined as never },
    ) as ChatLlm;
    t.teardown(() => llm.stop());
    for (let i = 0; i < 50; i++) {
      await llm.ask(
        {
          messages: [
            { role: 'system', content: 'robot' },
            { role: 'user', content: `number ${i}` },
          ],
          tools: [],
        },
        new AbortController().signal,
      );
      await llm.history!.idle();
    }
    const summaries = upstream.requests.filter((r) => r.body.messages[0]?.content === SUMMARY_INSTRUCTION);
    const answers = upstream.requests.length - summaries.length;
    t.equal(answers, 50);
    t.ok(upstream.requests.length <= 50 * (1 + 1 / 5), `${upstream.requests.length} model calls for 50 answers (${summaries.length} summaries)`);
    t.equal(summaries.length, 9, 'one summary per 5 answers once the window is full: (50 - 5) / 5');
    const last = upstream.requests
      .filter((r) => !summaries.includes(r))
      .at(-1)!
      .body.messages.map((m) => String(m.content));
    t.ok(last.includes('Summary of the earlier conversation: They talked about numbers.'), 'the summary is sent');
  });
}
