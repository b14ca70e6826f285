// Voice turn latency: a spoken question through the embedded service (pocketsphinx, espeak-ng) and a scripted model upstream, streaming against not streaming, every stage printed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_COMMANDS, jsgfGrammar } from '../dist/src/service/backends/commands.js';
import { startScriptedUpstream } from '../dist/test/support/scripted-upstream.js';
import { median, percentile, startAgent } from './lib/agent.js';
import { finish, quick } from './lib/bench.js';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: quick ? '1' : '5' },
    'first-token-ms': { type: 'string', default: '300' },
    'tokens-per-second': { type: 'string', default: '40' },
    // The robot's hang-over (ms of non-speech that ends an utterance); default: the runtime's.
    'hangover-ms': { type: 'string' },
    // Also measure these hang-overs on a question with a pause inside (cut words against latency), e.g. 100,150,200,300.
    sweep: { type: 'string' },
    'sweep-turns': { type: 'string', default: '3' },
    // Also run streaming with the model request sent on partial transcripts (the input's `speculative` setting): its latency and the extra model calls.
    speculative: { type: 'boolean', default: false },
    // The question spoken (words of the local recogniser's grammar); a longer one gets partial transcripts before its end.
    question: { type: 'string', default: 'what is your name' },
    quick: { type: 'boolean' },
  },
});
const HANGOVER = values['hangover-ms'] === undefined ? undefined : Number(values['hangover-ms']);
const SWEEP = values.sweep ? values.sweep.split(',').map(Number) : [];
const TURNS = Number(values.turns);
const QUESTION = values.question;
// A three-sentence answer of 54 words (67 tokens of 4 characters with its JSON), shaped as chat models answer: a short first
// sentence, then the substance. The gain of streaming grows with the length of the answer; the first sound depends on the first sentence only.
// `--quick` (the suite's check that the bench still runs) speaks two short sentences: the turn ends when the answer has played.
const ANSWER = quick
  ? 'I am Pip. I am a small helper robot.'
  : 'I am Pip. I am a small helper robot who lives in this house with the family and keeps an eye on things while everyone is busy or away. ' +
    'You can ask me to move around, look at something for you, tell you what I see, or just keep you company for a while.';
const STAGES = ['speech_end', 'final_transcript', 'request_sent', 'upstream_request', 'first_token', 'first_sentence', 'first_audio_byte', 'playback_start'];

const dir = mkdtempSync(join(tmpdir(), 'cortexd-voice-turn-'));
// sox -R: its dither is seeded, so the WAV (and the whole-utterance baseline decode, which is sensitive to it) is the same every run.
// The question, spoken by espeak-ng at 160 words per minute, with 1 s of silence before and 16 s after (the answer is spoken meanwhile): one turn per pass of the loop.
const raw = join(dir, 'q.wav');
const wav = join(dir, 'question.wav');
execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', raw, QUESTION]);
execFileSync('sox', ['-R', raw, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'pad', '1', '16']);
// For the sweep: "hello robot", a pause of PAUSE_MS, "what is your name" (espeak-ng's own silences trimmed): one utterance, or cut in two.
const PAUSE_MS = 150;
const PAUSED_QUESTION = 'hello robot what is your name';
const paused = join(dir, 'paused.wav');
if (SWEEP.length) {
  const part = (text, name) => {
    execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', join(dir, `${name}.raw.wav`), text]);
    execFileSync('sox', [
      '-R',
      join(dir, `${name}.raw.wav`),
      '-r',
      '16000',
      '-c',
      '1',
      '-b',
      '16',
      '-e',
      'signed-integer',
      join(dir, `${name}.wav`),
      'silence',
      '1',
      '0.01',
      '1%',
      'reverse',
      'silence',
      '1',
      '0.01',
      '1%',
      'reverse',
    ]);
    return join(dir, `${name}.wav`);
  };
  const a = part('hello robot', 'a');
  const b = part('what is your name', 'b');
  execFileSync('sox', ['-R', '-n', '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', join(dir, 'gap.wav'), 'trim', '0', String(PAUSE_MS / 1000)]);
  execFileSync('sox', ['-R', a, join(dir, 'gap.wav'), b, paused, 'pad', '1', '16']);
}

// The baseline transcript: the question decoded whole, after its end (how the local service decoded before it decoded live).
const baselineHeard = execFileSync(
  'pocketsphinx_continuous',
  ['-infile', wav, '-logfn', '/dev/null', '-dither', 'yes', '-seed', '1', '-jsgf', writeGrammar()],
  { encoding: 'utf8' },
)
  .split('\n')
  .map((l) => l.trim())
  .filter(Boolean)
  .join(' ');
function writeGrammar() {
  const file = join(dir, 'commands.gram');
  writeFileSync(file, jsgfGrammar(DEFAULT_COMMANDS));
  return file;
}

const upstream = await startScriptedUpstream({
  sentence: ANSWER,
  firstTokenMs: Number(values['first-token-ms']),
  tokensPerSecond: Number(values['tokens-per-second']),
});

function configFor(name, stream, { hangover = HANGOVER, audio = wav, speculative = false } = {}) {
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
            {
              type: 'SpeechlabASRInput',
              config: {
                descriptor: 'Voice',
                language: 'en',
                microphone: { binding: 'replay', file: audio, loop: true },
                ...(hangover !== undefined ? { vad: { hangover_ms: hangover } } : {}),
                ...(speculative ? { speculative: true } : {}),
              },
            },
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

async function measure(name, stream, opts = {}, turnsWanted = TURNS) {
  const agent = startAgent(configFor(name, stream, opts), join(dir, `${name}-state`), {
    CORTEX_CLOUD_PROVIDER_A_BASE_URL: upstream.baseUrl,
    CORTEX_CLOUD_PROVIDER_A_API_KEY: 'scripted',
  });
  const callsBefore = upstream.requests.length;
  try {
    const turns = [];
    const seen = new Set();
    for (let i = 0; i < turnsWanted; i++) {
      const turn = await agent.waitFor((e) => e.type === 'turn' && !seen.has(e), 40_000, `turn ${i + 1} of ${name}`);
      seen.add(turn);
      // What the robot heard for this turn: the final transcripts since the previous turn.
      const at = agent.events.indexOf(turn);
      const prev = Math.max(-1, ...agent.events.slice(0, at).map((e, j) => (e.type === 'turn' ? j : -1)));
      const heard = agent.events
        .slice(prev + 1, at)
        .filter((e) => e.type === 'input' && e.final && e.input === 'SpeechlabASRInput')
        .map((e) => e.text);
      // When the request reached the model upstream (through the embedded service), on the same clock.
      const arrived = upstream.requests.find((r) => r.at >= turn.origin_at + turn.stages_ms.request_sent);
      turns.push({ ...turn, heard, stages_ms: { ...turn.stages_ms, ...(arrived ? { upstream_request: arrived.at - turn.origin_at } : {}) } });
    }
    // Model calls that reached the upstream while these turns ran (a speculative request dropped is one more than the turns).
    modelCalls[name] = upstream.requests.length - callsBefore;
    return turns;
  } finally {
    await agent.stop();
  }
}

const runs = {};
const sweep = [];
const modelCalls = {};
try {
  runs.streaming = await measure('streaming', true);
  runs.not_streaming = await measure('not-streaming', false);
  if (values.speculative) runs.speculative = await measure('speculative', true, { speculative: true });
  for (const h of SWEEP)
    sweep.push({ hangover_ms: h, turns: await measure(`sweep-${h}`, true, { hangover: h, audio: paused }, Number(values['sweep-turns'])) });
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
  const name = variant.replace('_', '-');
  summary[variant] = {
    turns: turns.length,
    model_calls: modelCalls[name],
    extra_model_calls: modelCalls[name] - turns.filter((t) => t.outcome !== 'silent').length,
    origin: [...new Set(turns.map((t) => t.origin))],
    outcome: turns.map((t) => t.outcome),
    sentences: turns.map((t) => t.sentences),
    gaps_ms: turns.flatMap((t) => t.gaps_ms),
    heard: turns.map((t) => t.heard.join(' | ')),
    stages,
  };
}
const med = (v, stage) => summary[v].stages[stage]?.median_ms;
const first = (v) => med(v, 'playback_start');
const s = first('streaming');
const n = first('not_streaming');
const finalMs = med('streaming', 'final_transcript');
const ttsMs =
  med('streaming', 'first_audio_byte') !== undefined && med('streaming', 'first_sentence') !== undefined
    ? med('streaming', 'first_audio_byte') - med('streaming', 'first_sentence')
    : undefined;
const sweepSummary = sweep.map(({ hangover_ms, turns }) => {
  const finals = turns.map((t) => t.stages_ms.final_transcript).filter((x) => typeof x === 'number');
  return {
    hangover_ms,
    final_transcript_median_ms: finals.length ? median(finals) : undefined,
    heard: turns.map((t) => t.heard.join(' | ')),
    // A turn that did not hear the whole question at once: the pause cut it.
    cut_turns: turns.filter((t) => t.heard.join(' ') !== PAUSED_QUESTION || t.heard.length !== 1).length,
  };
});
const result = {
  bench: 'voice-turn',
  question: QUESTION,
  answer: ANSWER,
  model: { first_token_ms: Number(values['first-token-ms']), tokens_per_second: Number(values['tokens-per-second']) },
  hangover_ms: HANGOVER ?? 'default',
  baseline_transcript: baselineHeard,
  turns_per_variant: TURNS,
  ...summary,
  first_sound_ms: { streaming: s, not_streaming: n, ratio: s !== undefined && n ? Math.round((s / n) * 1000) / 1000 : undefined },
  first_sentence_to_audio_ms: ttsMs,
  ...(sweep.length ? { sweep: { question: PAUSED_QUESTION, pause_ms: PAUSE_MS, by_hangover: sweepSummary } } : {}),
};
console.log(JSON.stringify(result, null, 2));
const missed = [];
// No word lost: every streamed turn heard what the whole-utterance decode of the same question hears.
const lost = runs.streaming.filter((t) => t.heard.join(' ') !== baselineHeard);
if (s === undefined || n === undefined) missed.push('no playback measured');
else {
  if (finalMs === undefined || finalMs > 250) missed.push(`final transcript ${finalMs} ms > 250 ms after the end of speech`);
  if (ttsMs === undefined || ttsMs > 100) missed.push(`first sentence -> first audio byte ${ttsMs} ms > 100 ms`);
  if (s > 800) missed.push(`first sound ${s} ms > 800 ms after the end of speech`);
  if (lost.length) missed.push(`${lost.length} streamed turns heard something else than the whole-utterance decode ("${baselineHeard}")`);
}
console.log(
  `voice-turn: end of speech -> final ${finalMs} ms, request ${med('streaming', 'request_sent')}, first token ${med('streaming', 'first_token')}, first sentence ${med('streaming', 'first_sentence')}, ` +
    `first audio byte ${med('streaming', 'first_audio_byte')} (${ttsMs} ms after the sentence), first sound ${s} ms streaming vs ${n} ms not streaming (ratio ${result.first_sound_ms.ratio}), ` +
    `hang-over ${HANGOVER ?? 'default'}, ${TURNS} turns each, transcripts ${lost.length ? 'DIFFER' : 'equal'}; ` +
    (summary.speculative
      ? `speculative: request ${med('speculative', 'request_sent')}, first sound ${first('speculative')} ms, ${summary.speculative.extra_model_calls} extra model calls in ${summary.speculative.turns} turns; `
      : '') +
    (missed.length ? `MISSED target: ${missed.join('; ')}` : 'within target'),
);
await finish(0);
