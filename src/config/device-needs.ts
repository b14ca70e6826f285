// What hardware and servers a configuration uses (microphone, camera, serial ports, speaker, other servers), asked of each plugin's descriptor, for doctor.
import type { AddressKey } from '../cloud/addresses.js';
import type { AgentConfig } from './schema.js';
import { descriptors as builtin } from '../plugins/index.js';
import { implicitActions } from './used-plugins.js';
import type { Descriptor, DeviceNeed, PluginDescriptors } from '../plugins/types.js';

/**
 * Hardware a configuration needs. `undefined` for a device means "not used"; doctor then only warns
 * when the device is missing. Each plugin entry's descriptor says what its parsed `config` block uses
 * (src/plugins/): simulated bindings (microphone replay, file or synthetic camera, serialport mock,
 * file or null speaker) use no hardware. An entry whose type is unknown contributes nothing (the
 * configuration check fails it). `reason` names the first entry that needs the device.
 */
export interface DeviceNeeds {
  /** False when no configuration was loaded: nothing is known to be used. */
  configured: boolean;
  microphone?: { recorder?: string; device?: string; reason: string };
  camera?: { device: number | string; reason: string };
  serial: string[];
  speaker?: { player?: string; device?: string; reason: string };
  /** Servers other than the hosted API that plugins call (a LocalLLM's `base_url`), with who calls them. */
  network?: Array<{ url: string; reason: string }>;
  /** Addresses of the hosted API (or the embedded service) that plugins call, with the first entry that calls each. */
  services?: Array<{ address: AddressKey; reason: string }>;
}

interface Entry {
  where: string;
  label: string;
  descriptor: Descriptor | undefined;
  config: unknown;
}

/** Every plugin entry of every mode (implicit actions included) and the global model, with its descriptor. */
function entries(config: Pick<AgentConfig, 'modes' | 'cortex_llm'>, d: PluginDescriptors): Entry[] {
  const out: Entry[] = [];
  if (config.cortex_llm)
    out.push({ where: 'cortex_llm', label: config.cortex_llm.type, descriptor: d.llms.get(config.cortex_llm.type), config: config.cortex_llm.config });
  for (const [modeName, mode] of Object.entries(config.modes)) {
    const at = `modes.${modeName}`;
    mode.agent_inputs.forEach((i, n) => out.push({ where: `${at}.agent_inputs[${n}]`, label: i.type, descriptor: d.inputs.get(i.type), config: i.config }));
    [...mode.agent_actions, ...implicitActions(mode)].forEach((a, n) =>
      out.push({
        where: `${at}.agent_actions[${n}]`,
        label: `${a.name} ${a.connector}`,
        descriptor: d.actions.get(a.name)?.connectors.get(a.connector),
        config: a.config,
      }),
    );
    mode.simulators.forEach((s, n) => out.push({ where: `${at}.simulators[${n}]`, label: s.type, descriptor: d.simulators.get(s.type), config: s.config }));
    if (mode.cortex_llm)
      out.push({ where: `${at}.cortex_llm`, label: mode.cortex_llm.type, descriptor: d.llms.get(mode.cortex_llm.type), config: mode.cortex_llm.config });
  }
  return out;
}

export function deviceNeeds(config: Pick<AgentConfig, 'modes' | 'cortex_llm'>, descriptors: PluginDescriptors = builtin): DeviceNeeds {
  const needs: DeviceNeeds = { configured: true, serial: [] };
  const serial = new Set<string>();
  const network = new Map<string, string>();
  const services = new Map<AddressKey, string>();
  for (const e of entries(config, descriptors)) {
    const reason = `${e.where} (${e.label})`;
    const list: DeviceNeed[] = e.descriptor?.needs(e.config ?? {}) ?? [];
    for (const n of list) {
      if (n.kind === 'microphone') needs.microphone ??= { recorder: n.recorder, ...(n.device ? { device: n.device } : {}), reason };
      else if (n.kind === 'camera') needs.camera ??= { device: n.device, reason };
      else if (n.kind === 'serial') serial.add(n.path);
      else if (n.kind === 'speaker') needs.speaker ??= { ...(n.player ? { player: n.player } : {}), ...(n.device ? { device: n.device } : {}), reason };
      else if (n.kind === 'network' && !network.has(n.url)) network.set(n.url, reason);
      else if (n.kind === 'service' && !services.has(n.address)) services.set(n.address, reason);
    }
  }
  needs.serial = [...serial].sort();
  if (network.size) needs.network = [...network].map(([url, reason]) => ({ url, reason }));
  if (services.size) needs.services = [...services].map(([address, reason]) => ({ address, reason }));
  return needs;
}
