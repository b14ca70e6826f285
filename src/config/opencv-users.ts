// Which entries of a configuration load OpenCV, whether the optional OpenCV bindings are installed, and the warning when one is used but absent.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { deviceNeeds } from './device-needs.js';
import type { AgentConfig } from './schema.js';

/** The npm package that binds OpenCV; an optional dependency that `scripts/setup.sh --no-opencv` leaves unbuilt. */
export const OPENCV_PACKAGE = '@u4/opencv4nodejs';

/** What to do when OpenCV is missing, for messages of check, run and doctor. */
export const OPENCV_FIX =
  'run `bash scripts/setup.sh` without --no-opencv in the source checkout (it installs libopencv-dev and compiles @u4/opencv4nodejs, about 5 minutes on 2 cores), then systemd/install.sh again if the robot runs the installed service';

/** One entry that loads OpenCV: where it is (a JSON path of the converted form) and why. */
export interface OpenCvUser {
  path: string;
  why: string;
}

/** Input types that always load OpenCV: their camera defaults to the `opencv` binding, and local vision detects faces with it. */
const VISION_INPUTS = new Set(['VLMInput', 'LocalVLMInput']);

/**
 * Entries that load OpenCV when they run: inputs only (no action or simulator uses it). An input
 * with a `camera` block of any binding (`file` and `synthetic` decode and draw frames with OpenCV),
 * the vision inputs, and an input for which doctor's device needs found a camera (a `/dev/video*`
 * path, OM1's `camera_index`).
 */
export function openCvUsers(config: AgentConfig): OpenCvUser[] {
  const users = new Map<string, string>();
  for (const [modeName, mode] of Object.entries(config.modes)) {
    const entries = [
      ...mode.agent_inputs.map((input, n) => [input, `modes.${modeName}.agent_inputs[${n}]`] as const),
      ...(mode.backgrounds ?? []).map((input, n) => [input, `modes.${modeName}.backgrounds[${n}]`] as const),
    ];
    entries.forEach(([input, path]) => {
      const block = input.config.camera;
      if (block && typeof block === 'object') {
        const binding = (block as Record<string, unknown>).binding;
        users.set(path, `${input.type} reads a camera${typeof binding === 'string' ? ` (binding ${binding})` : ''} through OpenCV`);
      } else if (VISION_INPUTS.has(input.type)) {
        users.set(path, `${input.type} reads a camera through OpenCV`);
      }
    });
  }
  const camera = deviceNeeds(config).camera;
  if (camera) {
    const [path, why] = splitReason(camera.reason);
    if (path.includes('.agent_inputs[') && !users.has(path)) users.set(path, `${why ?? 'this input'} needs a camera`);
  }
  return [...users].map(([path, why]) => ({ path, why }));
}

/** `modes.x.agent_inputs[0] (VLMInput)` -> [`modes.x.agent_inputs[0]`, `VLMInput`]. */
function splitReason(reason: string): [string, string | undefined] {
  const m = /^(\S+) \((.+)\)$/.exec(reason);
  return m ? [m[1]!, m[2]] : [reason, undefined];
}

export type OpenCvInstall = { state: 'built'; dir: string; binary: string } | { state: 'unbuilt'; dir: string } | { state: 'absent' };

/**
 * Whether the OpenCV bindings are there without loading them (loading takes a while and needs the
 * system libraries): the package resolves from here and its compiled module exists, the file its
 * loader requires (`build/Release/opencv4nodejs.node`).
 */
export function openCvInstall(from: string = import.meta.url): OpenCvInstall {
  let entry: string;
  try {
    entry = createRequire(from).resolve(OPENCV_PACKAGE);
  } catch {
    return { state: 'absent' };
  }
  // The package root: the nearest package.json that names the package (cjs/ and esm/ carry their own).
  let dir = dirname(entry);
  while (!namesPackage(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  const binary = join(dir, 'build', 'Release', 'opencv4nodejs.node');
  return existsSync(binary) ? { state: 'built', dir, binary } : { state: 'unbuilt', dir };
}

function namesPackage(file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === OPENCV_PACKAGE;
  } catch {
    return false;
  }
}

/** Words for an install state that is not usable: why OpenCV cannot load. */
export function describeMissing(install: OpenCvInstall): string {
  return install.state === 'unbuilt'
    ? `${OPENCV_PACKAGE} is installed without its compiled bindings (set-up ran with --no-opencv)`
    : `${OPENCV_PACKAGE} is not installed`;
}

/** Warnings for `check` and `run`: each entry that loads OpenCV when OpenCV cannot load. Empty when it is built. */
export function openCvWarnings(config: AgentConfig, install: OpenCvInstall = openCvInstall()): Array<{ path: string; message: string }> {
  if (install.state === 'built') return [];
  return openCvUsers(config).map((u) => ({
    path: u.path,
    message: `${u.why}, but ${describeMissing(install)}; this entry will fail when it starts. Fix: ${OPENCV_FIX}`,
  }));
}
