// Proves LlmPlugin.stop() of the history-keeping plugins aborts a background history summary in flight (what a mode's runtime calls when it stops).
import t from 'tap';
import { completionEvents } from '../../src/cloud/sse.js';
import { pino } from 'pino';
import type { CloudClient } from '../../src/cloud/client.js';
import { SUMMARY_INSTRUCTION } from '../../src/cortex/history.js';
import type { LlmPlugin } from '../../src/cortex/llm.js';
import { createCloudLlm } from '../../src/cortex/llm/cloud-llm.js';
import { createMultiLlm } from '../../src/cortex/llm/multi-llm.js';

/** A chat client that answers prompts at once and holds summary requests until their signal aborts. */
function fakeCloud() {
  const summaries: AbortSignal[] = [];
  let summaryStarted: () => void = () => {};
  const started = new Promise<void>((r) => (summaryStarted = r));
  const chat = {
    create: (_provider: string, body: { model: string; messages: Array<{ role: string; content: unknown }> }, opts: { signal: AbortSignal }) => {
      if (body.messages[0]?.content === SUMMARY_INSTRUCTION) {
        summaries.push(opts.signal);
        summaryStarted();
        return new Promise((_resolve, reject) => opts.signal.addEventListener('abort', () => reject(opts.signal.reason)));
      }
      return Promise.resolve({ model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }] });
    },
  };
  // The plugins read answers as events (streamed or not); this client's are its whole completions.
  const events = async (provider: string, body: { model: string; messages: Array<{ role: string; content: unknown }> }, opts: { signal: AbortSignal }) =>
    completionEvents(await chat.create(provider, body, opts), 'POST /fake');
  const cloud = { chat: { ...chat, events } } as unknown as CloudClient;
  return { cloud, summaries, started };
}

const ctx = (cloud: CloudClient) => ({ logger: pino({ level: 'silent' }), cloud });
const ask = (llm: LlmPlugin, text: string) =>
  llm.ask(
    {
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: text },
      ],
      tools: [],
    },
    new AbortController().signal,
  );

for (const [name, make] of [
  ['CloudLLM', (c: CloudClient) => createCloudLlm({ history_length: 1, stream: false }, ctx(c))],
  ['MultiLLM', (c: CloudClient) => createMultiLlm({ history_length: 1, models: [{ type: 'CloudLLM', config: { stream: false } }] }, ctx(c))],
] as const) {
  t.test(`${name}: stop() aborts the summary of older exchanges that runs in the background`, async (t) => {
    const f = fakeCloud();
    const llm = make(f.cloud);
    t.type(llm.stop, 'function', 'the plugin implements stop');
    await ask(llm, 'one');
    await ask(llm, 'two');
    await f.started;
    t.equal(f.summaries.length, 1, 'one summary runs');
    t.notOk(f.summaries[0]!.aborted);
    llm.stop!();
    t.ok(f.summaries[0]!.aborted, 'stop aborted it');
  });
}
