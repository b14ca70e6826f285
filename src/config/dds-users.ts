// Which entries of a configuration need the DDS addon (a robot body over DDS, a ROS 2 topic), whether the addon is built, and the warning when it is not.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AgentConfig } from './schema.js';

/** The npm package of the addon: an optional local package (devices/dds/native) that `scripts/setup.sh --no-dds` leaves unbuilt. */
export const DDS_PACKAGE = '@cortexd/dds-addon';

/** What to do when the addon is missing, for messages of check, run and doctor. */
export const DDS_FIX =
  'run `bash scripts/setup.sh` without --no-dds in the source checkout (it installs cyclonedds-dev and compiles the addon in seconds), or `npm rebuild @cortexd/dds-addon` once cyclonedds-dev is installed';

/** Body bindings carried over DDS. */
export const DDS_BINDINGS = new Set(['unitree_dds', 'ros2', 'ros2_zenoh']);
/** Input and action types that always use DDS. */
const DDS_INPUTS = new Set(['Ros2TopicInput']);

export interface DdsUser {
  path: string;
  why: string;
}

function bindingOf(block: unknown): string | undefined {
  const b = (block as Record<string, unknown> | undefined)?.binding;
  return typeof b === 'string' ? b : undefined;
}

/** Entries that open a DDS participant when they run: body inputs and move connectors on a DDS binding, ROS 2 topic inputs and connectors. */
export function ddsUsers(config: AgentConfig): DdsUser[] {
  const users: DdsUser[] = [];
  for (const [modeName, mode] of Object.entries(config.modes)) {
    const inputs = [
      ...mode.agent_inputs.map((input, n) => [input, `modes.${modeName}.agent_inputs[${n}]`] as const),
      ...(mode.backgrounds ?? []).map((input, n) => [input, `modes.${modeName}.backgrounds[${n}]`] as const),
    ];
    for (const [input, path] of inputs) {
      const binding = bindingOf(input.config);
      if (binding && DDS_BINDINGS.has(binding)) users.push({ path, why: `${input.type} reads a robot over DDS (binding ${binding})` });
      else if (DDS_INPUTS.has(input.type)) users.push({ path, why: `${input.type} subscribes to a ROS 2 topic over DDS` });
    }
    mode.agent_actions.forEach((action, n) => {
      const connector = action.connector;
      const binding = bindingOf(action.config);
      if (binding && DDS_BINDINGS.has(binding))
        users.push({ path: `modes.${modeName}.agent_actions[${n}]`, why: `${action.name} drives a robot over DDS (binding ${binding})` });
      else if (connector === 'ros2_topic')
        users.push({ path: `modes.${modeName}.agent_actions[${n}]`, why: `${action.name} publishes on a ROS 2 topic over DDS` });
    });
  }
  if (config.lidar?.source === 'ros2') users.push({ path: 'lidar', why: `the lidar reads sensor_msgs/LaserScan on ${config.lidar.topic} over DDS` });
  return users;
}

export type DdsInstall = { state: 'built'; binary: string } | { state: 'unbuilt'; dir: string } | { state: 'absent' };

/** Whether the addon is there, without loading it: the package resolves from here and its compiled module exists. */
export function ddsInstall(from: string = import.meta.url): DdsInstall {
  let pkg: string;
  try {
    pkg = createRequire(from).resolve(`${DDS_PACKAGE}/package.json`);
  } catch {
    return { state: 'absent' };
  }
  const dir = dirname(pkg);
  try {
    const main = (JSON.parse(readFileSync(pkg, 'utf8')) as { main?: string }).main ?? 'build/cortexd_dds.node';
    const binary = join(dir, main);
    return existsSync(binary) ? { state: 'built', binary } : { state: 'unbuilt', dir };
  } catch {
    return { state: 'unbuilt', dir };
  }
}

export function describeDdsMissing(install: DdsInstall): string {
  return install.state === 'unbuilt'
    ? `${DDS_PACKAGE} is installed without its compiled addon (set-up ran with --no-dds, or cyclonedds-dev was missing)`
    : `${DDS_PACKAGE} is not installed`;
}

/** Warnings for `check` and `run`: each entry that needs DDS when the addon is not built. Empty when it is. */
export function ddsWarnings(config: AgentConfig, install: DdsInstall = ddsInstall()): Array<{ path: string; message: string }> {
  if (install.state === 'built') return [];
  return ddsUsers(config).map((u) => ({
    path: u.path,
    message: `${u.why}, but ${describeDdsMissing(install)}; this entry will fail when it starts. Fix: ${DDS_FIX}`,
  }));
}
