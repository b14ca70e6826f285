// A whole agent process hears speech and answers aloud: espeak-ng recording -> replay microphone -> embedded speech recognition -> prompt -> speak tool call -> espeak-ng audio in a file.
import { requireCommands } from '../helpers/requires.js';
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgent, workDir } from '../helpers/agent-process.js';
import type { AgentEvent } from '../../src/cortex/events.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

const tools = ['espeak-ng', 'sox', 'pocketsphinx_continuous'].filter((p) => {
  try {
    execFileSync('sh', ['-c', `command -v ${p}`], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
});
requireCommands(tools);

/** "hello robot" spoken by espeak-ng, as a 16 kHz mono WAV with silence around it (one utterance per pass). */
function recording(dir: string): string {
  const raw = join(dir, 'espeak.wav');
  const wav = join(dir, 'hello-robot.wav');
  execFileSync('espeak-ng', ['-v', 'en-us', '-s', '140', '-w', raw, 'hello robot']);
  execFileSync('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'pad', '0.5', '3']);
  return wav;
}

/** Samples of a 16-bit PCM WAV (walks the RIFF chunks to `data`). */
function wavSamples(buf: Buffer): { rate: number; channels: number; samples: Int16Array } {
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let off = 12;
  let rate = 0;
  let channels = 0;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    let size = buf.readUInt32LE(off + 4);
    if (id === 'fmt ') {
      channels = buf.readUInt16LE(off + 10);
      rate = buf.readUInt32LE(off + 12);
    }
    if (id === 'data') {
      // espeak-ng streaming to stdout leaves the size at 0x7fffffff-ish; take what is there.
      size = Math.min(size, buf.length - off - 8);
      const data = buf.subarray(off + 8, off + 8 + size - (size % 2));
      return { rate, channels, samples: new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length)) };
    }
    off += 8 + size + (size % 2);
  }
  throw new Error('WAV without a data chunk');
}

t.test('speech in -> transcript -> prompt -> speak tool call -> espeak-ng audio out', async (t) => {
  const w = workDir();
  const wav = recording(w.dir);
  const speech = w.file('speech');
  const config = w.file('speech.json5');
  writeFileSync(
    config,
    `{ version: "v1.0.5", name: "speech", default_mode: "listen", allow_manual_switching: false, mode_memory_enabled: false,
       api_key: "", system_governance: "", service: { base_url: "embedded" },
       cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
       modes: { listen: { display_name: "Listen", description: "d", system_prompt_base: "You are a robot. Answer what you hear.", hertz: 2,
         agent_inputs: [{ type: "SpeechlabASRInput", config: { descriptor: "Voice", language: "en", microphone: { binding: "replay", file: ${JSON.stringify(wav)}, loop: true } } }],
         agent_actions: [{ name: "speak", llm_label: "speak", connector: "local_tts", config: { speaker: { binding: "file", dir: ${JSON.stringify(speech)}, realtime: false } } }] } } }`,
  );
  const agent = startAgent(config, w.state, ['--for', '90s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));

  const heard = await agent.waitFor<Ev<'input'>>((e) => e.type === 'input' && e.input === 'SpeechlabASRInput' && e.final, 45_000, 'a final transcript');
  t.equal(heard.text, 'hello robot', 'the embedded recogniser transcribed the recording');
  const prompt = await agent.waitFor<Ev<'prompt'>>((e) => e.type === 'prompt', 10_000, 'a prompt');
  t.match(prompt.prompt, /INPUT: Voice\n\/\/ START\nhello robot\n\/\/ END/, 'the transcript is in the fused prompt');
  const answer = await agent.waitFor<Ev<'model.answer'>>((e) => e.type === 'model.answer' && e.tool_calls.length > 0, 10_000, 'a model answer');
  t.same(answer.tool_calls, [{ name: 'speak', arguments: { sentence: 'Hello! Nice to meet you.' } }], 'the rule-based model asked to speak');
  // The answer streams: each sentence is its own speak command, synthesised while the one before plays.
  const done = await agent.waitFor<Ev<'action'>>(
    (e) => e.type === 'action' && e.label === 'speak' && e.state !== 'queued' && e.state !== 'running',
    20_000,
    'speak finished',
  );
  t.match(done, { state: 'done', connector: 'local_tts', value: { sentence: 'Hello!' } });
  const second = await agent.waitFor<Ev<'action'>>(
    (e) => e.type === 'action' && e.label === 'speak' && e.state === 'done' && e !== done,
    20_000,
    'the second sentence',
  );
  t.match(second, { value: { sentence: 'Nice to meet you.' } });
  const turn = await agent.waitFor<Ev<'turn'>>((e) => e.type === 'turn', 20_000, 'the turn event');
  t.match(turn, { mode: 'listen', streamed: true, origin: 'speech_end', sentences: 2, spoken: 2, outcome: 'spoken' });
  for (const stage of ['final_transcript', 'request_sent', 'first_token', 'first_sentence', 'first_audio_byte', 'playback_start'] as const) {
    t.type(turn.stages_ms[stage], 'number', `the turn has its ${stage} stage`);
  }
  t.ok(turn.stages_ms.final_transcript! <= turn.stages_ms.request_sent! && turn.stages_ms.request_sent! <= turn.stages_ms.playback_start!, 'stages in order');

  t.ok(existsSync(speech), 'the file speaker wrote its directory');
  const clips = readdirSync(speech)
    .filter((f) => f.endsWith('.wav'))
    .sort();
  t.ok(clips.length >= 2, `a WAV clip per sentence was written (${clips.join(', ')})`);
  const { rate, channels, samples } = wavSamples(readFileSync(join(speech, clips[0]!)));
  t.equal(channels, 1);
  t.ok(rate >= 16000, `espeak-ng rate ${rate}`);
  t.ok(samples.length > rate / 2, `at least half a second of audio (${samples.length} samples)`);
  let loud = 0;
  for (const s of samples) if (Math.abs(s) > 1000) loud++;
  t.ok(loud > samples.length / 20, `the audio is not silence (${loud} loud samples)`);

  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'exit 0 after SIGTERM');
});
