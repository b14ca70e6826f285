// A failing camera (no such device; a file OpenCV cannot read) stays in its input: reported on the bus, retried with the backoff, while the agent ticks and answers.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import type { AgentEvent } from '../../src/cortex/events.js';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';

type ErrorEv = Extract<AgentEvent, { type: 'error' }>;

t.test('camera failures are contained to their inputs and retried; the rest of the robot works', async (t) => {
  const w = workDir();
  const broken = w.file('broken.avi');
  writeFileSync(broken, 'this is not a video');
  const config = w.file('cameras.json5');
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'cameras',
      default_mode: 'watch',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: '',
      system_governance: 'obey',
      service: { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
      modes: {
        watch: {
          display_name: 'Watch',
          description: 'two broken cameras and a keyboard',
          system_prompt_base: 'You are a robot. Answer briefly.',
          hertz: 5,
          agent_inputs: [
            // A device that is not there: the camera reopens it after its own backoff; each failure is on the bus.
            {
              type: 'LocalVLMInput',
              config: { descriptor: 'Front', camera: { binding: 'opencv', device: '/dev/video-none', restart_initial_ms: 100, restart_max_ms: 400 } },
            },
            // A file OpenCV cannot read: the input fails and the input actor restarts it after its backoff.
            { type: 'LocalVLMInput', config: { descriptor: 'Back', camera: { binding: 'file', file: broken } } },
            // The offline rule model answers what reads as speech: a "Voice" line.
            { type: 'TextInput', config: { source: 'socket', path: w.socket, descriptor: 'Voice' } },
          ],
          agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
        },
      },
    }),
  );
  const agent = startAgent(config, w.state, ['--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const errors = () => agent.events.filter((e): e is ErrorEv => e.type === 'error' && e.source === 'input.LocalVLMInput');
  await agent.waitFor(() => errors().filter((e) => /reopened in \d+ ms/.test(e.message)).length >= 2, 20_000, 'the missing device reported and reopened twice');
  await agent.waitFor(
    () => errors().filter((e) => /failed: .*restarting in \d+ ms/.test(e.message)).length >= 2,
    20_000,
    'the unreadable file: the input restarted twice',
  );

  const ticks = () => agent.events.filter((e) => e.type === 'tick').length;
  const seen = ticks();
  await agent.waitFor(() => ticks() >= seen + 5, 10_000, 'five more ticks while the cameras keep failing');
  t.pass('the loop goes on ticking while both cameras fail');
  await typeLines(w.socket, ['hello robot']);
  const spoken = await agent.waitFor((e) => e.type === 'action' && e.label === 'speak' && e.state === 'done', 20_000, 'an answer spoken');
  t.ok(spoken, 'typed text still reaches the model and the answer is spoken');
  t.equal(agent.child.exitCode, null, 'the agent runs on');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'and stops cleanly');
});
