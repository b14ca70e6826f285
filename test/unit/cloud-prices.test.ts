// Proves usage turns into CU with the spec's tables: exact then longest-prefix model lookup, and whole CU rounded up per request.
import t from 'tap';
import { asrCost, chatCost, chatCostExact, chatPriceFor, CostMeter, ttsCost } from '../../src/cloud/prices.js';

t.test('model lookup: exact, then longest prefix, never a guess', async (t) => {
  t.equal(chatPriceFor('provider_a', 'gen-4o')?.input, 42500);
  t.equal(chatPriceFor('provider_a', 'gen-4o-mini-2024-07-18')?.model, 'gen-4o-mini', 'longest prefix wins');
  t.equal(chatPriceFor('provider_a', 'gen-4o-2024-08-06')?.model, 'gen-4o');
  t.equal(chatPriceFor('provider_a', 'gen-5.2')?.output, 280000);
  t.equal(chatPriceFor('provider_e', 'qw3-30b-a3b-instruct-2507')?.model, 'qw/qw3-30b-a3b-instruct-2507', 'org part optional');
  t.equal(chatPriceFor('provider_f', 'orgm/ll-3.3-70b-instruct')?.input, 9000);
  t.equal(chatPriceFor('provider_f', 'orgm/ll-3.1-70b-instruct'), undefined, 'listed model without a price');
  t.equal(chatPriceFor('provider_b', 'gen-4o'), undefined, 'prices are per provider');
  t.equal(chatPriceFor('provider_x', 'gen-4o'), undefined);
});

t.test('chat cost: exact value and whole CU rounded up', async (t) => {
  const u = { provider: 'provider_a', model: 'gen-4o', promptTokens: 1000, completionTokens: 500 };
  t.equal(chatCostExact(u), 42.5 + 85);
  t.equal(chatCost(u), 128);
  t.equal(chatCost({ ...u, promptTokens: 1, completionTokens: 0 }), 1, 'any non-empty request costs at least 1 CU');
  t.equal(chatCost({ ...u, promptTokens: 0, completionTokens: 0 }), 0);
  t.equal(chatCost({ provider: 'provider_a', model: 'gen-5-nano', promptTokens: 1_000_000, completionTokens: 1_000_000 }), 4500);
  t.equal(chatCost({ ...u, model: 'unknown' }), undefined);
});

t.test('speech costs', async (t) => {
  t.equal(ttsCost('speechlab', 1_000_000), 30000);
  t.equal(ttsCost('speechb', 100), 1, '100 chars = 1 CU after rounding up');
  t.equal(ttsCost('speechb', 0), 0);
  t.equal(asrCost('speechlab', 60), 35);
  t.equal(asrCost('general', 120), 100);
  t.equal(asrCost('speechlab', 1), 1);
});

t.test('a session meter sums whole CU and counts unpriced requests', async (t) => {
  const m = new CostMeter();
  m.addChat({ provider: 'provider_a', model: 'gen-4o', promptTokens: 1000, completionTokens: 500 });
  m.addChat({ provider: 'provider_a', model: 'mystery', promptTokens: 1000, completionTokens: 500 });
  m.addTts('speechlab', 1000);
  m.addAsr('speechlab', 120);
  t.same({ chat: m.chat, tts: m.tts, asr: m.asr, unpriced: m.unpricedRequests, total: m.total }, { chat: 128, tts: 30, asr: 70, unpriced: 1, total: 228 });
});
