// Proves the vision inputs: VLMInput sends real JPEG frames and reads replies as "Vision:" lines; LocalVLMInput describes motion on the robot.
import t from 'tap';
import { firstValueFrom, take, toArray } from 'rxjs';
import { VlmInput, VLMInputSchema, createVlmInput } from '../../actors/inputs/vlm-input.js';
import { LocalVlmInput, LocalVLMInputSchema } from '../../actors/inputs/local-vlm-input.js';
import { createCamera } from '../../devices/camera.js';
import { createLogger } from '../../src/log.js';
import { FakeLink as FakeVisionLink } from '../../src/testing/fake-link.js';


t.test('VLMInput: JPEG frames of the camera reach the socket; the newest reply is the Vision line', async (t) => {
  const link = new FakeVisionLink();
  const config = VLMInputSchema.parse({ camera: { binding: 'synthetic', width: 320, height: 240, fps: 20 }, fps: 10 });
  const input = new VlmInput(config, { connect: async () => link, camera: createCamera(config.camera) });
  const replies: string[] = [];
  const sub = input.listen().subscribe((r) => replies.push(r.text));
  await link.nextFrame();
  const first = link.frames[0]!;
  t.same([...first.jpeg.subarray(0, 2)], [0xff, 0xd8], 'a JPEG');
  t.ok(Math.abs(first.ts - Date.now() / 1000) < 5, 'stamped with its capture time in seconds');
  link.reply('I see no faces. No motion information yet.');
  link.reply('I see 1 face (left). Slight motion (3% of the view).');
  t.same(replies.length, 2);
  t.equal(input.formattedLatestBuffer(), 'Vision: I see 1 face (left). Slight motion (3% of the view).', 'only the newest');
  t.equal(input.formattedLatestBuffer(), undefined);
  t.equal(input.rawToText({ text: 'x', at: 1 })?.final, false, 'vision does not wake the loop');
  sub.unsubscribe();
  t.equal(link.closed, 1000, 'unsubscribing closes the socket');
  await input.stop();
});

t.test('VLMInput needs the hosted service', async (t) => {
  const ctx = { logger: createLogger({ level: 'silent' }), stateDir: '/tmp', signal: new AbortController().signal };
  t.throws(() => createVlmInput({ camera: { binding: 'synthetic' } }, ctx), /VLMInput: needs the hosted service/);
  t.notOk(VLMInputSchema.safeParse({ quality: 101 }).success, 'quality is bounded');
});

t.test('LocalVLMInput: a moving shape is described without any network, newest first', async (t) => {
  const config = LocalVLMInputSchema.parse({ camera: { binding: 'synthetic', width: 320, height: 240, fps: 20 }, fps: 10 });
  const input = new LocalVlmInput(config, createCamera(config.camera));
  const raws = await firstValueFrom(input.listen().pipe(take(3), toArray()));
  t.match(raws[0]!.text, /^I see no faces\. No motion information yet\.$/, 'the first frame has nothing to compare with');
  t.ok(raws.slice(1).every((r) => r.analysis.motion !== undefined && r.analysis.motion > 0), 'later frames see the disc move');
  t.match(raws[2]!.text, /^I see no faces\. (Slight|Strong) motion \(\d+% of the view\)\.$/);
  t.equal(input.formattedLatestBuffer(), `Vision: ${raws[2]!.text}`, 'only the newest description');
  await input.stop();
});
