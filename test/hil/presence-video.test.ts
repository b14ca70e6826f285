// HIL: a person arriving in a video read by OpenCV (a real face photograph after empty frames): the presence background publishes approaching_detected and OM1's rule switches the mode.
import { requireBuild, requireCommands } from '../helpers/requires.js';
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgent } from '../helpers/agent-process.js';

t.setTimeout(300_000);
// Grace Hopper's portrait (US Navy photograph, public domain; the copy matplotlib ships as sample data), kept
// in the fixtures so the test needs no other package: OpenCV's own sample data has no face.
const FACE = fileURLToPath(new URL('../fixtures/faces/grace_hopper.jpg', import.meta.url));
requireBuild();
requireCommands(['ffmpeg']);

const dir = mkdtempSync(join(tmpdir(), 'hil-presence-'));

t.test('a face coming into view of the camera (a video file through OpenCV) fires the approaching rule', async (t) => {
  // Two seconds of an empty grey scene, then the person, four seconds (10 fps, the photograph's size).
  const video = join(dir, 'arrive.mp4');
  execFileSync('ffmpeg', [
    ...['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=gray:s=512x600:d=2:r=10', '-loop', '1', '-t', '4', '-r', '10', '-i', FACE],
    ...[
      '-filter_complex',
      '[0:v]format=yuv420p[a];[1:v]scale=512:600,format=yuv420p[b];[a][b]concat=n=2:v=1:a=0',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      video,
    ],
  ]);
  const config = {
    version: 'v1.0.5',
    name: 'door',
    default_mode: 'waiting',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    api_key: 'openmind_free',
    system_governance: 'Be kind.',
    service: { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' },
    cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
    modes: {
      waiting: {
        display_name: 'Waiting',
        description: 'nobody at the door',
        system_prompt_base: 'You wait by the door.',
        hertz: 1,
        // OM1's ApproachingPerson background, on a camera that is a video file (loop: false, the person stays).
        backgrounds: [
          { type: 'PresenceInput', config: { approaching_key: 'approaching_detected', fps: 5, camera: { binding: 'file', file: video, loop: false } } },
        ],
      },
      greeting: { display_name: 'Greeting', description: 'someone came', system_prompt_base: 'You greet.', hertz: 1 },
    },
    transition_rules: [
      { from_mode: 'waiting', to_mode: 'greeting', transition_type: 'context_aware', context_conditions: { approaching_detected: true }, priority: 1 },
    ],
  };
  const file = join(dir, 'door.json');
  writeFileSync(file, JSON.stringify(config));
  const agent = startAgent(file, join(dir, 'state'), ['--for', '90s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const switched = await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'greeting', 120_000);
  t.match(switched, { from: 'waiting', to: 'greeting', trigger: 'context_aware' });
  const values = agent.events
    .filter((e) => e.type === 'context' && e.source === 'background.PresenceInput')
    .map((e) => (e as { values: Record<string, unknown> }).values);
  t.match(values[0], { faces: 0, approaching_detected: false }, 'the empty scene first: nobody');
  t.ok(
    values.some((v) => typeof v.faces === 'number' && v.faces > 0 && v.approaching_detected === true),
    'then the face: approaching',
  );
});
