// Builds descriptors from a schema and a typed `needs` of the parsed block, and the device needs the shared device blocks imply.
import type { z } from 'zod';
import { parseBrokerUrl } from './schemas/broker.js';
import type { CameraConfigSchema, MicrophoneConfigSchema, SpeakerConfigSchema } from './schemas/devices.js';
import type { ConnectorDescriptor, Descriptor, DeviceNeed } from './types.js';

export interface DescriptorSource<S extends z.ZodType> {
  type: string;
  description: string;
  schema: S;
  /** Needs of a block the schema accepted (defaults applied); omitted: the plugin needs nothing. */
  needs?: (config: z.output<S>) => DeviceNeed[];
}

/** A descriptor whose `needs` parses the raw block first: a block the schema refuses needs nothing (`check` reports it). */
export function descriptor<S extends z.ZodType>(source: DescriptorSource<S>): Descriptor {
  const { needs } = source;
  return {
    type: source.type,
    description: source.description,
    schema: source.schema,
    needs: (config) => {
      if (!needs) return [];
      const parsed = source.schema.safeParse(config ?? {});
      return parsed.success ? needs(parsed.data) : [];
    },
  };
}

export function connector<S extends z.ZodType>(source: DescriptorSource<S> & { motion?: boolean }): ConnectorDescriptor {
  return { ...descriptor(source), motion: source.motion ?? false };
}

/** A microphone block needs hardware only with the `recorder` binding (`replay` reads a file). */
export function microphoneNeeds(mic: z.output<typeof MicrophoneConfigSchema>): DeviceNeed[] {
  return mic.binding === 'recorder' ? [{ kind: 'microphone', recorder: mic.recorder, ...(mic.device ? { device: mic.device } : {}) }] : [];
}

/** A camera block needs hardware only with the `opencv` binding (`file` and `synthetic` do not). */
export function cameraNeeds(camera: z.output<typeof CameraConfigSchema>): DeviceNeed[] {
  return camera.binding === 'opencv' ? [{ kind: 'camera', device: camera.device }] : [];
}

/** A speaker block needs hardware only with the `player` binding (`file` and `null` do not). */
export function speakerNeeds(speaker: z.output<typeof SpeakerConfigSchema>): DeviceNeed[] {
  if (speaker.binding !== 'player') return [];
  return [{ kind: 'speaker', ...(speaker.player ? { player: speaker.player } : {}), ...(speaker.device ? { device: speaker.device } : {}) }];
}

/** A serial port needs hardware only with the `serialport` binding (`mock` is serialport's in-process mock). */
export function serialNeeds(binding: 'serialport' | 'mock', path: string): DeviceNeed[] {
  return binding === 'serialport' ? [{ kind: 'serial', path }] : [];
}

/** A broker named by an MQTT plugin: the network address `cortexd doctor` tries (without credentials). */
export function brokerNeeds(url: string): DeviceNeed[] {
  const r = parseBrokerUrl(url);
  return r.ok ? [{ kind: 'network', url: r.url }] : [];
}
