// Voice turn latency: a spoken question through the embedded service (pocketsphinx, espeak-ng) and a scripted model upstream, streaming against not streaming, every stage printed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startScriptedUpstream } from '../dist/test/support/scripted-upstream.js';
import { median, percentile, startAgent } from './lib/agent.js';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '5' },
    'first-token-ms': { type: 'string', default: '300' },
    'tokens-per-second': { type: 'string', default: '40' },
  },
});
const TURNS = Number(values.turns);
const QUESTION = 'what is your name';
// A three-sentence answer of 54 words (67 tokens of 4 characters with its JSON), shaped as chat models answer: a short first
// sentence, then the substance. The gain of streaming grows with the length of the answer; the first sound depends on the first sentence only.
const ANSWER =
  'I am Pip. I am a small helper robot who lives in this house with the family and keeps an eye on things while everyone is busy or away. ' +
  'You can ask me to move around, look at something for you, tell you what I see, or just keep you company for a while.';
const STAGES = ['speech_end', 'final_transcript', 'request_sent', 'upstream_request', 'first_token', 'first_sentence', 'first_audio_byte', 'playback_start'];

const dir = mkdtempSync(join(tmpdir(), 'cortexd-voice-turn-'));
// The question, spoken by espeak-ng at 160 words per minute, with 1 s of silence before and 16 s after (the answer is spoken meanwhile): one turn per pass of the loop.
const raw = join(dir, 'q.wav');
const wav = join(dir, 'question.wav');
execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', raw, QUESTION]);
execFileSync('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'pad', '1', '16']);

const upstream = await startScriptedUpstream({
  sentence: ANSWER,
  firstTokenMs: Number(values['first-token-ms']),
  tokensPerSecond: Number(values['tokens-per-second']),
});

function configFor(name, stream) {
  const file = join(dir, `${name}.json5`);
  writeFileSync(
    file,
    JSON.stringify({
      version: 'v1.0.5',
      name,
      default_mode: 'talk',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: '',
      system_governance: '',
      service: { base_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', stream, history_length: 0 } },
      modes: {
        talk: {
          display_name: 'Talk',
          description: 'answers questions',
          system_prompt_base: 'You are Pip, a robot. Answer what you hear.',
          hertz: 1,
          agent_inputs: [
            { type: 'SpeechlabASRInput', config: { descriptor: 'Voice', language: 'en', microphone: { binding: 'replay', file: wav, loop: true } } },
          ],
          agent_actions: [
            {
              name: 'speak',
              llm_label: 'speak',
              connector: 'speechlab_tts',
              config: { response_format: 'pcm_22050', speaker: { binding: 'file', dir: join(dir, `${name}-speech`), realtime: true } },
            },
          ],
        },
      },
    }),
  );
  return file;
}

async function measure(name, stream) {
  const agent = startAgent(configFor(name, stream), join(dir, `${name}-state`), {
    CORTEX_CLOUD_PROVIDER_A_BASE_URL: upstream.baseUrl,
    CORTEX_CLOUD_PROVIDER_A_API_KEY: 'scripted',
  });
  try {
    const turns = [];
    const seen = new Set();
    for (let i = 0; i < TURNS; i++) {
      const turn = await agent.waitFor((e) => e.type === 'turn' && !seen.has(e), 40_000, `turn ${i + 1} of ${name}`);
      seen.add(turn);
      // When the request reached the model upstream (through the embedded service), on the same clock.
      const arrived = upstream.requests.find((r) => r.at >= turn.origin_at + turn.stages_ms.request_sent);
      turns.push({ ...turn, stages_ms: { ...turn.stages_ms, ...(arrived ? { upstream_request: arrived.at - turn.origin_at } : {}) } });
    }
    return turns;
  } finally {
    await agent.stop();
  }
}

const runs = {};
try {
  runs.streaming = await measure('streaming', true);
  runs.not_streaming = await measure('not-streaming', false);
} finally {
  await upstream.close();
}

const summary = {};
for (const [variant, turns] of Object.entries(runs)) {
  const stages = {};
  for (const stage of STAGES) {
    const xs = turns.map((t) => t.stages_ms[stage]).filter((x) => typeof x === 'number');
    if (xs.length) stages[stage] = { median_ms: median(xs), p90_ms: percentile(xs, 90), n: xs.length };
  }
  summary[variant] = {
    turns: turns.length,
    origin: [...new Set(turns.map((t) => t.origin))],
    outcome: turns.map((t) => t.outcome),
    sentences: turns.map((t) => t.sentences),
    gaps_ms: turns.flatMap((t) => t.gaps_ms),
    stages,
  };
}
const first = (v) => summary[v].stages.playback_start?.median_ms;
const s = first('streaming');
const n = first('not_streaming');
const result = {
  bench: 'voice-turn',
  question: QUESTION,
  answer: ANSWER,
  model: { first_token_ms: Number(values['first-token-ms']), tokens_per_second: Number(values['tokens-per-second']) },
  turns_per_variant: TURNS,
  ...summary,
  first_sound_ms: { streaming: s, not_streaming: n, ratio: s !== undefined && n ? Math.round((s / n) * 1000) / 1000 : undefined },
};
console.log(JSON.stringify(result, null, 2));
const missed = [];
if (s === undefined || n === undefined) missed.push('no playback measured');
else {
  if (s > n / 2) missed.push(`streaming first sound ${s} ms > half of ${n} ms`);
  if (s >= 1500) missed.push(`streaming first sound ${s} ms >= 1500 ms`);
}
console.log(
  `voice-turn: end of speech -> first sound median ${s} ms streaming vs ${n} ms not streaming (ratio ${result.first_sound_ms.ratio}), ${TURNS} turns each; ` +
    (missed.length ? `MISSED target: ${missed.join('; ')}` : 'within target'),
);
