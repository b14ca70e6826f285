// Proves the vision inputs: VLMInput sends real JPEG frames and reads replies as "Vision:" lines; LocalVLMInput describes motion on the robot.
import t from 'tap';
import { firstValueFrom, take, tap, toArray } from 'rxjs';
import { hostInput } from '../helpers/input-host.js';
import { waitFor } from '../helpers/wait.js';
import { VlmInput, VLMInputSchema, createVlmInput } from '../../actors/inputs/vlm-input.js';
import { LocalVlmInput, LocalVLMInputSchema } from '../../actors/inputs/local-vlm-input.js';
import { createCamera } from '../../devices/camera.js';
import { createLogger } from '../../src/log.js';
import { FakeLink as FakeVisionLink } from '../support/fake-link.js';

t.test('VLMInput: JPEG frames of the camera reach the socket; the newest reply is the Vision line', async (t) => {
  const link = new FakeVisionLink();
  const config = VLMInputSchema.parse({ camera: { binding: 'synthetic', width: 320, height: 240, fps: 20 }, fps: 10 });
  let input: VlmInput | undefined;
  const host = hostInput(
    'VLMInput',
    (callbacks) => (input = new VlmInput(config, { connect: async () => link, camera: createCamera(config.camera), ctx: callbacks })),
  );
  await link.nextFrame();
  t.ok(host.ref().getSnapshot().children['stream:vlm'], "the socket session is the input actor's child stream:vlm");
  const first = link.frames[0]!;
  t.same([...first.jpeg.subarray(0, 2)], [0xff, 0xd8], 'a JPEG');
  t.ok(Math.abs(first.ts - Date.now() / 1000) < 5, 'stamped with its capture time in seconds');
  link.reply('I see no faces. No motion information yet.');
  link.reply('I see 1 face (left). Slight motion (3% of the view).');
  await waitFor(() => (host.messages.length === 2 ? true : undefined));
  t.ok(
    host.messages.every((m) => !m.final),
    'vision does not wake the loop',
  );
  t.equal(input!.formattedLatestBuffer(), 'Vision: I see 1 face (left). Slight motion (3% of the view).', 'only the newest');
  t.equal(input!.formattedLatestBuffer(), undefined);
  host.stop();
  t.equal(link.closed, 1000, 'stopping the input closes the socket');
});

t.test('VLMInput needs the hosted service', async (t) => {
  const ctx = { logger: createLogger({ level: 'silent' }), stateDir: '/tmp', signal: new AbortController().signal };
  t.throws(() => createVlmInput({ camera: { binding: 'synthetic' } }, ctx), /VLMInput: needs the hosted service/);
  t.notOk(VLMInputSchema.safeParse({ quality: 101 }).success, 'quality is bounded');
});

t.test('LocalVLMInput: a moving shape is described without any network, newest first', async (t) => {
  const config = LocalVLMInputSchema.parse({ camera: { binding: 'synthetic', width: 320, height: 240, fps: 20 }, fps: 10 });
  const input = new LocalVlmInput(config);
  const raws = await firstValueFrom(
    input.listen().pipe(
      tap((r) => input.rawToText(r)),
      take(3),
      toArray(),
    ),
  );
  t.match(raws[0]!.text, /^I see no faces\. No motion information yet\.$/, 'the first frame has nothing to compare with');
  t.ok(
    raws.slice(1).every((r) => r.analysis.motion !== undefined && r.analysis.motion > 0),
    'later frames see the disc move',
  );
  t.match(raws[2]!.text, /^I see no faces\. (Slight|Strong) motion \(\d+% of the view\)\.$/);
  t.equal(input.formattedLatestBuffer(), `Vision: ${raws[2]!.text}`, 'only the newest description');
  await input.stop();
});
