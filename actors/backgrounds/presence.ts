// PresenceInput: a person in front of the camera, from OpenCV face detection on the robot, published as presence and approach context values.
import type { InputFactory } from '../../src/cortex/input.js';
import { PresenceInputSchema } from '../../src/plugins/schemas/body.js';
import { LocalVLMInputSchema } from '../../src/plugins/schemas/inputs.js';
import { LocalVlmInput } from '../inputs/local-vlm-input.js';

/**
 * The context values of one analysis: `faces` and `motion` as LocalVLMInput publishes them, plus
 * `present_key` (a face is in view) and `approaching_key`, true when faces come into view after none
 * (`beforeFaces` 0) and false when none is seen, so an OM1 rule such as `approaching_detected: true`
 * fires once per person arriving.
 */
export function presenceValues(
  beforeFaces: number,
  values: Record<string, unknown>,
  keys: { present_key: string; approaching_key: string },
): Record<string, unknown> {
  const faces = typeof values.faces === 'number' ? values.faces : 0;
  const arriving = faces > 0 && beforeFaces === 0;
  return {
    ...values,
    [keys.present_key]: faces > 0,
    ...(arriving ? { [keys.approaching_key]: true } : faces === 0 ? { [keys.approaching_key]: false } : {}),
  };
}

/**
 * LocalVLMInput's camera and analysis (faces and motion, OpenCV on the robot) read as presence; the
 * "Presence:" line in the prompt is LocalVLMInput's description, and only a change in the count of
 * faces wakes the model.
 */
export const createPresenceInput: InputFactory = (raw, ctx) => {
  const config = PresenceInputSchema.parse(raw ?? {});
  const vision = LocalVLMInputSchema.parse({
    camera: config.camera,
    fps: config.fps,
    wake: config.wake,
    buffer_size: config.buffer_size,
    descriptor: config.descriptor ?? 'Presence',
    wake_on: ['faces'],
  });
  let before = 0;
  const publishContext = (values: Record<string, unknown>) => {
    const published = presenceValues(before, values, config);
    before = typeof values.faces === 'number' ? values.faces : 0;
    ctx.publishContext?.(published);
  };
  return new LocalVlmInput(vision, { ...ctx, publishContext });
};
