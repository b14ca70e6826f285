// Proves the service's metering math: exact micro-CU per price row kind, price lookup, and the rounding rules.
import t from 'tap';
import { CHAT_PRICES, MODEL_PREFIXES, PROVIDERS } from '../../src/cloud/catalog.js';
import {
  MICRO,
  asrCostMicro,
  billedCharacters,
  chatCostMicro,
  chatPrice,
  estimateTokens,
  microToBalanceCu,
  microToCostCu,
  ttsCostMicro,
} from '../../src/service/metering.js';

t.test('every chat price row: 1M tokens in and out cost exactly the listed CU', async (t) => {
  for (const row of CHAT_PRICES) {
    const price = chatPrice(row.provider, row.model);
    t.same([price.input, price.output], [row.input, row.output], `${row.provider} ${row.model}`);
    t.equal(chatCostMicro(price, 1_000_000, 1_000_000) / MICRO, row.input + row.output);
  }
});

t.test('price lookup for supported models without an exact row', async (t) => {
  t.equal(chatPrice('provider_a', 'gen-4o-mini-2024-07-18').model, 'gen-4o-mini', 'longest prefix wins over gen-4o');
  t.equal(chatPrice('provider_a', 'gen-4o-2024').model, 'gen-4o');
  t.equal(chatPrice('provider_e', 'qw3-30b-a3b-instruct-2507').model, 'qw/qw3-30b-a3b-instruct-2507', 'org-less name');
  t.equal(chatPrice('provider_f', 'orgm/ll-3.1-70b-instruct').model, 'orgc/sage-top-4.5', 'unpriced: the provider’s dearest row');
  for (const provider of PROVIDERS) for (const prefix of MODEL_PREFIXES[provider]) t.ok(chatPrice(provider, prefix), `${provider} ${prefix} has a price`);
});

t.test('chat cost: tokens times CU per 1M, in micro-CU, no rounding', async (t) => {
  t.equal(chatCostMicro({ input: 42500, output: 170000 }, 1000, 2000), 382_500_000);
  t.equal(chatCostMicro({ input: 500, output: 4000 }, 1, 1), 4500);
});

t.test('speech synthesis per character (code points)', async (t) => {
  t.equal(ttsCostMicro('speechlab', 1_000_000), 30000 * MICRO);
  t.equal(ttsCostMicro('speechb', 1_000_000), 10000 * MICRO);
  t.equal(billedCharacters('héllo 🤖'), 7);
});

t.test('recognition: bytes / (rate * 2) seconds at CU per minute, rounded half-up to a micro-CU', async (t) => {
  t.equal(asrCostMicro('speechlab', 16000 * 2 * 60, 16000), 35 * MICRO, 'one minute at 16 kHz');
  t.equal(asrCostMicro('general', 8000 * 2 * 60, 8000), 50 * MICRO, 'one minute at 8 kHz');
  t.equal(asrCostMicro('speechlab', 44100 * 2 * 30, 44100), 17.5 * MICRO, 'half a minute at 44.1 kHz');
  // 1 byte at 16 kHz: 35e6 / 1.92e6 = 18.23 micro-CU -> 18
  t.equal(asrCostMicro('speechlab', 1, 16000), 18);
  // 3 bytes at 22050: 3*35e6/2646000 = 39.68 -> 40
  t.equal(asrCostMicro('speechlab', 3, 22050), 40);
  t.equal(asrCostMicro('speechlab', 10 * 3600 * 32000, 16000), 600 * 35 * MICRO, 'ten hours stay exact');
});

t.test('reported rounding: total_cost up, balances down', async (t) => {
  t.equal(microToCostCu(382_500_000), 383);
  t.equal(microToCostCu(1), 1);
  t.equal(microToCostCu(0), 0);
  t.equal(microToBalanceCu(99_617_500_000), 99617);
  t.equal(microToBalanceCu(-1), -1, 'a debt shows as negative');
});

t.test('token estimate of the offline model', async (t) => {
  t.equal(estimateTokens(''), 0);
  t.equal(estimateTokens('a'), 1);
  t.equal(estimateTokens('abcdefghi'), 3);
});
