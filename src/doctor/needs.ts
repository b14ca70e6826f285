// What hardware a configuration uses (microphone, camera, serial ports, speaker), read from its plugin entries for doctor.
import type { AgentConfig } from '../config/schema.js';

/**
 * Hardware a configuration needs. `undefined` for a device means "not used"; doctor then only warns
 * when the device is missing. Detection reads the plugin entries, since plugins do not declare
 * their devices: a device binding block (`binding: "recorder" | "opencv" | "serialport"`, as in
 * devices/), device paths (`/dev/tty*`, `/dev/video*`), OM1's `camera_index` and `serial_port`,
 * and type or connector names (speech recognition inputs hear, vision inputs see, TTS speaks).
 * Simulated bindings (replay, file, synthetic, mock) and network streams (RTSP) use no hardware.
 */
export interface DeviceNeeds {
  /** False when no configuration was loaded: nothing is known to be used. */
  configured: boolean;
  microphone?: { recorder?: string; device?: string; reason: string };
  camera?: { device: number | string; reason: string };
  serial: string[];
  speaker?: { reason: string };
}

interface Entry {
  where: string;
  type: string;
  config: unknown;
}

const SIMULATED = new Set(['replay', 'file', 'synthetic', 'mock', 'null', 'sim']);
const HEARS = /asr|microphone|\bmic\b|speech.?input/i;
const SEES = /vlm|camera|vision|face|yolo|coco/i;
const SPEAKS = /tts|speak|speaker/i;
const NETWORK = /rtsp|cloud|twitter|ros2|zenoh|websim|console|avatar/i;

function entries(config: AgentConfig): Entry[] {
  const out: Entry[] = [];
  for (const [modeName, mode] of Object.entries(config.modes)) {
    mode.agent_inputs.forEach((i, n) => out.push({ where: `modes.${modeName}.agent_inputs[${n}]`, type: i.type, config: i.config }));
    mode.agent_actions.forEach((a, n) =>
      out.push({ where: `modes.${modeName}.agent_actions[${n}]`, type: `${a.name} ${a.connector}`, config: a.config }),
    );
    mode.simulators.forEach((s, n) => out.push({ where: `modes.${modeName}.simulators[${n}]`, type: s.type, config: s.config }));
  }
  return out;
}

/** Every object inside a plugin config block, the block itself included. */
function objects(value: unknown, out: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  if (Array.isArray(value)) for (const v of value) objects(v, out);
  else if (value && typeof value === 'object') {
    out.push(value as Record<string, unknown>);
    for (const v of Object.values(value)) objects(v, out);
  }
  return out;
}

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

const isSerialPath = (s: string): boolean => /^\/dev\/(tty(S|USB|ACM|AMA|THS)\d+|serial\/|cu\.)/.test(s);

export function deviceNeeds(config: AgentConfig): DeviceNeeds {
  const needs: DeviceNeeds = { configured: true, serial: [] };
  const serial = new Set<string>();
  for (const e of entries(config)) {
    const blocks = objects(e.config);
    const bindings = blocks.map((b) => b.binding).filter((b): b is string => typeof b === 'string');
    const simulatedOnly = bindings.length > 0 && bindings.every((b) => SIMULATED.has(b));
    for (const b of blocks) {
      if (b.binding === 'recorder' && !needs.microphone) {
        needs.microphone = {
          ...(typeof b.recorder === 'string' ? { recorder: b.recorder } : {}),
          ...(typeof b.device === 'string' ? { device: b.device } : {}),
          reason: e.where,
        };
      }
      if (b.binding === 'opencv' && !needs.camera) {
        const d = b.device;
        needs.camera = { device: typeof d === 'number' || typeof d === 'string' ? d : 0, reason: e.where };
      }
      if (typeof b.camera_index === 'number' && !needs.camera) needs.camera = { device: b.camera_index, reason: e.where };
      if (b.binding === 'serialport' && typeof b.path === 'string') serial.add(b.path);
      if (typeof b.serial_port === 'string') serial.add(b.serial_port);
    }
    for (const s of strings(e.config)) {
      if (isSerialPath(s)) serial.add(s);
      if (/^\/dev\/video\d+$/.test(s) && !needs.camera) needs.camera = { device: s, reason: e.where };
    }
    if (simulatedOnly || NETWORK.test(e.type)) continue;
    if (HEARS.test(e.type) && !needs.microphone) needs.microphone = { reason: `${e.where} (${e.type})` };
    if (SEES.test(e.type) && !needs.camera) needs.camera = { device: 0, reason: `${e.where} (${e.type})` };
    if (SPEAKS.test(e.type) && !needs.speaker) needs.speaker = { reason: `${e.where} (${e.type})` };
  }
  needs.serial = [...serial].sort();
  return needs;
}
