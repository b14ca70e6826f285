// The program guard: every program a configuration could start, and which of them the robot's local allowlist does not name (a pushed configuration is data).
import { isDeepStrictEqual } from 'node:util';
import { splitArgv } from './hook-argv.js';
import type { AgentConfig, HookConfig } from './schema.js';
import type { AllowedProgram } from './allowed-programs.js';

export { AllowedProgram, AllowedPrograms } from './allowed-programs.js';

/*
 * A configuration that reaches the robot from anywhere but its own files (a fleet `reload`, a watched
 * file another user can write) may not start a program unless the robot's own allowlist names exactly
 * that program. What a configuration can start:
 *   - command hooks (`handler_type: "command"`): the argv as written (split like a shell, placeholders
 *     such as `{mode_name}` kept as written: they are filled when the hook runs);
 *   - function hooks (`handler_type: "function"`): `module.function` in config/hooks/, with its `args`;
 *   - MCP servers with `transport: "stdio"`: `command`, `args` and `env`;
 *   - the `local_tts` speech connector's `command` when it is not the built-in `espeak-ng`;
 *   - device strings that can start or write what they name: an ALSA device of a microphone or
 *     speaker other than a plain card name (`file:"|cmd"` pipes to a program, `file:PATH` writes a
 *     file), a camera `device` other than an index or /dev/video* (a GStreamer pipeline, a URL).
 * Programs the runtime picks itself (the recorder and the player, chosen from fixed lists) are not the
 * configuration's. An entry allows one program with exactly these arguments (and environment):
 *   { program: "/usr/local/bin/beep", args: ["-f", "440"] }     command hook, MCP stdio server, TTS
 *   { program: "/usr/bin/tools-server", args: [], env: { LEVEL: "1" } }
 *   { function: "notify.send", args: { channel: "ops" } }       function hook
 *   { device: "rtsp://10.0.0.5/stream" }                         a device string
 * `program` is compared as written in the configuration (no PATH look-up): allow the path you push.
 */

export type ProgramKind = 'command hook' | 'function hook' | 'MCP stdio server' | 'speech program' | 'device string';

/** A program a configuration could start, and where it is written. */
export type ProgramUse =
  | { kind: 'command hook' | 'MCP stdio server' | 'speech program'; where: string; program: string; args: string[]; env: Record<string, string> }
  | { kind: 'function hook'; where: string; function: string; args: unknown }
  | { kind: 'device string'; where: string; device: string };

/** An ALSA device name that only names a card or a standard plugin (no file, no pipe, no inline definition). */
const PLAIN_ALSA = /^[A-Za-z0-9_]+(:[A-Za-z0-9_,.=-]*)?$/;
const WRITING_ALSA = new Set(['file', 'tee', 'shm']);
/** A camera the kernel names: /dev/video*, /dev/v4l/by-id|by-path/*. */
const PLAIN_CAMERA = /^\/dev\/(video\d+|v4l\/by-(id|path)\/[A-Za-z0-9_:.-]+)$/;

function deviceUses(config: unknown, at: string, out: ProgramUse[]): void {
  if (!config || typeof config !== 'object') return;
  const c = config as Record<string, unknown>;
  for (const key of ['microphone', 'speaker'] as const) {
    const d = (c[key] as Record<string, unknown> | undefined)?.device;
    if (typeof d !== 'string') continue;
    const plain = PLAIN_ALSA.test(d) && !WRITING_ALSA.has(d.split(':')[0]!.toLowerCase());
    if (!plain) out.push({ kind: 'device string', where: `${at}.config.${key}.device`, device: d });
  }
  const cam = (c.camera as Record<string, unknown> | undefined)?.device;
  if (typeof cam === 'string' && !PLAIN_CAMERA.test(cam)) out.push({ kind: 'device string', where: `${at}.config.camera.device`, device: cam });
}

/** The speech program the runtime runs when a `local_tts` connector names none. */
export const BUILTIN_TTS = 'espeak-ng';

function hookUses(hooks: HookConfig[], at: string, out: ProgramUse[]): void {
  hooks.forEach((hook, i) => {
    const where = `${at}[${i}] (${hook.hook_type} ${hook.handler_type} hook)`;
    const cfg = hook.handler_config;
    if (hook.handler_type === 'command') {
      let argv: string[];
      try {
        argv = splitArgv(cfg.command ?? '');
      } catch {
        argv = [cfg.command ?? ''];
      }
      const [program = '', ...args] = argv;
      out.push({ kind: 'command hook', where, program, args, env: {} });
    } else if (hook.handler_type === 'function') {
      const fn = cfg.module_name ? `${cfg.module_name}.${cfg.function ?? ''}` : (cfg.function ?? '');
      out.push({ kind: 'function hook', where, function: fn, args: cfg.args });
    }
  });
}

/** Every program `config` could start, in the order of the file (global hooks, then each mode's hooks, servers and actions). */
export function listPrograms(config: AgentConfig): ProgramUse[] {
  const out: ProgramUse[] = [];
  hookUses(config.global_lifecycle_hooks ?? [], 'global_lifecycle_hooks', out);
  for (const [name, mode] of Object.entries(config.modes)) {
    const at = `modes.${name}`;
    hookUses(mode.lifecycle_hooks ?? [], `${at}.lifecycle_hooks`, out);
    (mode.mcp_servers ?? []).forEach((s, i) => {
      if (s.transport !== 'stdio') return;
      out.push({ kind: 'MCP stdio server', where: `${at}.mcp_servers[${i}] (${s.name})`, program: s.command ?? '', args: s.args ?? [], env: s.env ?? {} });
    });
    (mode.agent_inputs ?? []).forEach((input, i) => deviceUses(input.config, `${at}.agent_inputs[${i}] (${input.type})`, out));
    (mode.backgrounds ?? []).forEach((b, i) => deviceUses(b.config, `${at}.backgrounds[${i}] (${b.type})`, out));
    (mode.agent_actions ?? []).forEach((a, i) => {
      deviceUses(a.config, `${at}.agent_actions[${i}] (${a.llm_label})`, out);
      if (a.connector !== 'local_tts') return;
      const command = (a.config as Record<string, unknown> | undefined)?.command;
      if (typeof command === 'string' && command !== BUILTIN_TTS) {
        out.push({ kind: 'speech program', where: `${at}.agent_actions[${i}] (${a.llm_label}).config.command`, program: command, args: [], env: {} });
      }
    });
  }
  return out;
}

/** True when `entry` allows exactly `use`. */
export function allows(entry: AllowedProgram, use: ProgramUse): boolean {
  if (use.kind === 'function hook') return 'function' in entry && entry.function === use.function && isDeepStrictEqual(entry.args, use.args);
  if (use.kind === 'device string') return 'device' in entry && entry.device === use.device;
  if (!('program' in entry)) return false;
  return entry.program === use.program && isDeepStrictEqual(entry.args, use.args) && isDeepStrictEqual(entry.env, use.env);
}

/** The uses of `config` that no entry of `allowlist` names. */
export function refusedPrograms(config: AgentConfig, allowlist: readonly AllowedProgram[]): ProgramUse[] {
  return listPrograms(config).filter((use) => !allowlist.some((entry) => allows(entry, use)));
}

/** Control characters out, length capped: a refusal line quotes what a pushed file says. */
function quote(s: string, max = 120): string {
  const clean = JSON.stringify(s.length > max ? `${s.slice(0, max)}...` : s);
  return clean;
}

/** One line per refused use: what it would start and where it is written. */
export function describeUse(use: ProgramUse): string {
  if (use.kind === 'function hook') {
    const args = use.args === undefined ? '' : ` with args ${quote(JSON.stringify(use.args) ?? '')}`;
    return `${use.where}: function hook ${quote(use.function)}${args} is not in this robot's allowlist`;
  }
  if (use.kind === 'device string') return `${use.where}: device ${quote(use.device, 200)} is not in this robot's allowlist`;
  const argv = [use.program, ...use.args].map((a) => quote(a, 200)).join(' ');
  const env = Object.keys(use.env).length > 0 ? ` with env ${Object.keys(use.env).join(', ')}` : '';
  return `${use.where}: ${use.kind} [${argv}]${env} is not in this robot's allowlist`;
}
