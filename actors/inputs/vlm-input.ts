// VLMInput: camera frames streamed to the hosted vision socket; the newest description becomes the "Vision: ..." prompt line.
import { Observable } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { VLMInputSchema, type VLMInputConfig } from '../../src/plugins/schemas/inputs.js';
import { CortexError } from '../../src/errors.js';
import { createCamera, type Camera } from '../../devices/camera.js';
import { startVlmStream, type VlmStreamOptions } from '../streams/vlm-stream.js';
import { linkFromVisionSession, type LinkConnector } from '../../src/cloud/link.js';
import { BufferedInput, InputSetupError } from './buffered-input.js';

export { VLMInputSchema, type VLMInputConfig };

/** A description of what the camera sees. */
export interface VisionRaw {
  text: string;
  at: number;
}

export interface VlmInputDeps {
  connect: LinkConnector;
  camera: Camera;
  ctx?: Pick<InputContext, 'logger' | 'signal'>;
  /** Extra stream options (tests replace the encoder or the sender's scheduler). */
  stream?: Partial<Pick<VlmStreamOptions, 'encode' | 'sender' | 'clock' | 'now'>>;
}

/**
 * Listening starts the camera and the VLM stream actor; unsubscribing or `stop()` ends both. Each
 * `{vlm_reply}` is a message (`final: false`: a picture changing does not wake the loop by itself);
 * the buffer keeps only the newest (`Vision: ...`). A fatal session error ends the raw stream.
 */
export class VlmInput extends BufferedInput<VisionRaw> {
  constructor(
    private readonly config: VLMInputConfig,
    private readonly deps: VlmInputDeps,
  ) {
    super({
      type: 'VLMInput',
      descriptor: config.descriptor ?? 'Vision',
      bufferSize: config.buffer_size,
      policy: 'latest',
      ...(deps.ctx?.logger ? { logger: deps.ctx.logger } : {}),
      ...(deps.ctx?.signal ? { signal: deps.ctx.signal } : {}),
    });
  }

  protected source(): Observable<VisionRaw> {
    return new Observable<VisionRaw>((subscriber) => {
      const stream = startVlmStream({
        connect: this.deps.connect,
        frames$: this.deps.camera.frames(),
        fps: this.config.fps,
        quality: this.config.quality,
        timing: { connectTimeoutMs: this.config.connect_timeout_ms, backoffMaxMs: this.config.backoff_max_ms },
        systemId: 'input.VLMInput',
        ...this.deps.stream,
      });
      const subs = [
        stream.actor.on('vlm.reply', (e) => subscriber.next({ text: String(e.text), at: Date.now() })),
        stream.actor.on('vlm.error', (e) => this.logger?.warn({ input: this.type, message: e.message }, 'vision error')),
        stream.actor.on('vlm.failed', (e) => subscriber.error(new CortexError('vlm_failed', `VLMInput: vision stopped: ${String(e.reason)}`))),
      ];
      return () => {
        for (const s of subs) s.unsubscribe();
        stream.stop();
      };
    });
  }

  rawToText(raw: VisionRaw): InputMessage | undefined {
    const text = raw.text.trim();
    return text ? { timestamp: raw.at, text, final: false } : undefined;
  }
}

/** The VLMInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createVlmInput: InputFactory = (raw, ctx) => {
  const config = VLMInputSchema.parse(raw ?? {});
  const cloud = ctx.cloud;
  if (!cloud) throw new InputSetupError('VLMInput', 'needs the hosted service (cloud client) to open its vision socket');
  const connect: LinkConnector = async (signal) => linkFromVisionSession(await cloud.openVision({ signal, connectTimeoutMs: config.connect_timeout_ms }));
  return new VlmInput(config, { connect, camera: createCamera(config.camera, { logger: ctx.logger }), ctx });
};
