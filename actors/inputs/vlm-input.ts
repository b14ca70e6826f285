// VLMInput: camera frames streamed to the hosted vision socket; the newest description becomes the "Vision: ..." prompt line.
import { Observable } from 'rxjs';
import type { InputContext, InputFactory, InputMessage, InputPlugin } from '../../src/cortex/input.js';
import { VLMInputSchema, type VLMInputConfig } from '../../src/plugins/schemas/inputs.js';
import { createCamera, type Camera } from '../../devices/camera.js';
import { vlmSession, type VlmSession, type VlmStreamOptions } from '../streams/vlm-stream.js';
import { deviceSessionInput } from '../streams/device-session.js';
import { DeviceError } from '../../devices/device-error.js';
import { CortexError } from '../../src/errors.js';
import { visionContextOf } from '../../src/vision/analyse.js';
import { StreamStoppedError, streamHealth } from './asr-input.js';
import { linkFromVisionSession, type LinkConnector } from '../../src/cloud/link.js';
import { BufferedInput, InputSetupError } from './buffered-input.js';
import { visionChanged } from '../../src/cortex/wake.js';

export { VLMInputSchema, type VLMInputConfig };

/** A description of what the camera sees. */
export interface VisionRaw {
  text: string;
  at: number;
}

export interface VlmInputDeps {
  connect: LinkConnector;
  camera: Camera;
  ctx?: Partial<Pick<InputContext, 'logger' | 'signal' | 'publishContext' | 'media'>>;
  /** Extra stream options (tests replace the encoder or the sender's scheduler). */
  stream?: Partial<Pick<VlmStreamOptions, 'encode' | 'sender' | 'now'>>;
}

/**
 * Its socket session runs as the input actor's child `stream:vlm` (`stream`); listening starts the
 * camera pipeline, which sends frames whenever a socket is open. Each `{vlm_reply}` is a message
 * (`final: false`: a picture changing does not wake the loop by itself); the buffer keeps only the
 * newest (`Vision: ...`). Each resource retries in one layer, its own session actor
 * (actors/streams/session-machine.ts): an OpenCV camera is a session of its own (`device`, the input
 * actor's child `device:camera`, events `cam.*`), reopened with the session machine's backoff and
 * breaker while the socket stays open; the socket's session reconnects it. A camera gone for good
 * (OpenCV missing) or a file camera that fails ends the raw stream and the input stops (the input
 * actor does not restart an input with a session), as a fatal session error does with
 * StreamStoppedError.
 */
export class VlmInput extends BufferedInput<VisionRaw> {
  readonly stream: NonNullable<InputPlugin['stream']>;
  /** An OpenCV camera, opened and reopened by its own session actor (absent for a file or synthetic camera). */
  readonly device?: NonNullable<InputPlugin['device']>;
  private readonly session: VlmSession;
  /** Ends the listening subscription with an error (set while `source()` is subscribed). */
  private fail: ((err: unknown) => void) | undefined;
  /** The last context published (faces, motion), so only changes are sent. */
  private published = '';

  constructor(
    private readonly config: VLMInputConfig,
    private readonly deps: VlmInputDeps,
  ) {
    super({
      type: 'VLMInput',
      descriptor: config.descriptor ?? 'Vision',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'latest',
      ...(deps.ctx?.logger ? { logger: deps.ctx.logger } : {}),
      ...(deps.ctx?.signal ? { signal: deps.ctx.signal } : {}),
    });
    this.session = vlmSession({
      connect: deps.connect,
      frames$: deps.camera.frames(),
      fps: config.fps,
      quality: config.quality,
      timing: { connectTimeoutMs: config.connect_timeout_ms, backoffMaxMs: config.backoff_max_ms },
      ...deps.stream,
      ...(deps.ctx?.media ? { onSent: (jpeg: Buffer, atMs: number) => deps.ctx?.media?.frame('VLMInput', jpeg, atMs) } : {}),
    });
    this.stream = { kind: 'vlm', input: this.session.input, onEvent: (e) => this.onSessionEvent(e) };
    const camera = deps.camera.device;
    if (camera) this.device = { name: 'camera', kind: 'cam', input: deviceSessionInput(camera, 'cam'), onEvent: (e) => this.onDeviceEvent(e) };
  }

  /** The camera gone for good ends listening. */
  private onDeviceEvent(e: { type: string; [k: string]: unknown }): void {
    if (e.type === 'cam.failed') this.fail?.(new CortexError('camera_failed', `VLMInput: camera stopped: ${String(e.reason)}`));
  }

  /** Frames sent, replaced and dropped so far. */
  stats() {
    return this.session.stats();
  }

  /** Listening: starts the camera into the session; emits no replies (they come from the session actor), only ends with an error. */
  protected source(): Observable<VisionRaw> {
    return new Observable<VisionRaw>((subscriber) => {
      this.fail = (err) => subscriber.error(err);
      this.session.start((err) => this.fail?.(DeviceError.from('camera', err)));
      return () => {
        this.fail = undefined;
        this.session.stop();
      };
    });
  }

  /** A session event: a reply becomes the raw event the input actor reports (returned); states say the input's health. */
  private onSessionEvent(e: { type: string; [k: string]: unknown }): VisionRaw | undefined {
    if (e.type === 'vlm.reply') {
      const text = String(e.text);
      const values = visionContextOf(text);
      const key = JSON.stringify(values);
      if (values && key !== this.published) {
        this.published = key;
        this.deps.ctx?.publishContext?.(values);
      }
      return this.heard({ text, at: Date.now() });
    }
    if (e.type === 'vlm.error') this.logger?.warn({ input: this.type, message: e.message }, 'vision error');
    else if (e.type === 'vlm.state') {
      const health = streamHealth(e);
      if (health === undefined) this.available();
      else if (health !== null) this.unavailable(health);
    } else if (e.type === 'vlm.failed') {
      this.unavailable('stopped');
      this.fail?.(new StreamStoppedError('vlm_failed', `VLMInput: vision stopped: ${String(e.reason)}`));
    }
    return undefined;
  }

  /** A meaningful change: the count of faces or the motion level (`wake_on`), else a description in other words. */
  protected override changed(previous: string, next: string): boolean {
    return visionChanged(previous, next, this.config.wake_on);
  }

  protected toMessage(raw: VisionRaw): InputMessage | undefined {
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
  return new VlmInput(config, { connect, camera: createCamera(config.camera), ctx });
};
