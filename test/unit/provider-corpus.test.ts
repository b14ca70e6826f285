// Proves every provider stream shape of the corpus reads to the same answer as its non-streamed twin, whatever the byte boundaries, and that broken ones fail with the provider's words.
import t from 'tap';
import { ModelProviderError } from '../../src/cloud/chunks.js';
import { answerEvents, completionEvents } from '../../src/cloud/sse.js';
import type { LlmAnswer } from '../../src/cortex/llm.js';
import { assemble } from '../../src/cortex/llm/stream.js';
import { loadFixtures, sampleCuts, type ProviderFixture } from '../support/provider-replay.js';

/**
 * Fixtures up to this size are cut at every byte boundary; larger ones at a seeded sample of this many
 * points (seeded by the size, so a run is repeatable), and every fixture is also fed one byte at a time.
 */
const EVERY_CUT_UP_TO = 600;
const SAMPLE = 80;

const fixtures = loadFixtures();

/** What an answer means to the robot: its text and its calls (ids differ between the two paths, so they are left out). */
export function meaning(a: Pick<LlmAnswer, 'text' | 'toolCalls'>): { text: string; calls: Array<{ name: string; arguments: unknown; extra?: unknown }> } {
  return { text: a.text ?? '', calls: a.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments, ...(c.extra ? { extra: c.extra } : {}) })) };
}

function body(bytes: Buffer, cuts: number[]): ReadableStream<Uint8Array> {
  const edges = [0, ...cuts, bytes.length];
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i >= edges.length - 1) return c.close();
      c.enqueue(new Uint8Array(bytes.subarray(edges[i], edges[i + 1])));
      i++;
    },
  });
}

const streamed = (f: ProviderFixture, cuts: number[]) =>
  assemble(answerEvents(new Response(body(f.bytes, cuts), { headers: { 'content-type': f.content_type } }), 'POST /x'), undefined, 0, 'm');

t.test('the corpus covers every provider the issue names, each with its source', async (t) => {
  const providers = new Set(fixtures.map((f) => f.provider.split(' ')[0]));
  for (const p of ['OpenAI', 'Gemini', 'DeepSeek', 'xAI', 'OpenRouter', 'Ollama', 'llama.cpp', 'vLLM', 'LM']) t.ok(providers.has(p), `a fixture of ${p}`);
  for (const f of fixtures) t.ok(f.source.length > 40, `${f.name} says where it came from`);
});

for (const f of fixtures) {
  t.test(`${f.name} (${f.provider})`, async (t) => {
    const cuts = f.bytes.length <= EVERY_CUT_UP_TO ? sampleCuts(f.bytes.length, f.bytes.length, 1) : sampleCuts(f.bytes.length, SAMPLE, f.bytes.length);
    if (f.expect.error) {
      let accepted = 0;
      for (const cut of cuts) if (!((await streamed(f, [cut]).catch((e: unknown) => e)) instanceof ModelProviderError)) accepted++;
      t.equal(accepted, 0, `cut at ${cuts.length} byte boundaries: always the provider's error`);
      const err = await streamed(f, []).catch((e: Error) => e);
      t.match((err as Error).message, f.expect.error, 'the error carries the provider message');
      return;
    }
    const whole = meaning(
      await assemble(
        (async function* () {
          yield* completionEvents(f.whole, 'POST /x');
        })(),
        undefined,
        0,
        'm',
      ),
    );
    t.same(whole, { text: f.expect.text ?? '', calls: f.expect.calls ?? [] }, 'the non-streamed twin means what the fixture says');
    t.same(meaning(await streamed(f, [])), whole, 'streamed in one piece');
    let differing = 0;
    for (const cut of cuts) {
      const got = meaning(await streamed(f, [cut]));
      if (JSON.stringify(got) !== JSON.stringify(whole)) differing++;
    }
    t.equal(differing, 0, `cut at ${cuts.length} byte boundaries: same answer`);
    t.same(meaning(await streamed(f, sampleCuts(f.bytes.length, f.bytes.length, 1))), whole, 'one byte at a time');
  });
}
