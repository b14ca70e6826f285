// Where cortexd finds its configurations and keeps its state; the one place that knows the layout on disk.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project root: the nearest directory above this module that holds package.json. Works from
 * src/ under tap and from dist/src/ after the build.
 */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

/** Directory of named configurations: `$CORTEX_CONFIG_DIR`, else `<project>/config`. */
export function configDir(): string {
  return process.env.CORTEX_CONFIG_DIR ? resolve(process.env.CORTEX_CONFIG_DIR) : join(projectRoot(), 'config');
}

/**
 * The state directory (mode memory, interactions, locations, the local service's database):
 * `$STATE_DIRECTORY` under systemd (first entry if several), else `$CORTEX_STATE_DIR`,
 * else `$XDG_STATE_HOME/cortexd`, else `~/.local/state/cortexd`. Never inside config/.
 */
export function stateDir(): string {
  const systemd = process.env.STATE_DIRECTORY?.split(':')[0];
  if (systemd) return resolve(systemd);
  if (process.env.CORTEX_STATE_DIR) return resolve(process.env.CORTEX_STATE_DIR);
  const xdg = process.env.XDG_STATE_HOME;
  return xdg ? join(resolve(xdg), 'cortexd') : join(homedir(), '.local', 'state', 'cortexd');
}

/**
 * Where the agent keeps its local e-stop socket: `$RUNTIME_DIRECTORY` under systemd
 * (`RuntimeDirectory=cortexd`, i.e. /run/cortexd), else `$CORTEX_RUNTIME_DIR`, else `<state dir>/run`.
 */
export function runtimeDir(state: string = stateDir()): string {
  const systemd = process.env.RUNTIME_DIRECTORY?.split(':')[0];
  if (systemd) return resolve(systemd);
  if (process.env.CORTEX_RUNTIME_DIR) return resolve(process.env.CORTEX_RUNTIME_DIR);
  return join(state, 'run');
}

/** Where `cortexd estop` looks for agents: `$CORTEX_RUNTIME_DIR`, else /run/cortexd when it exists (the service), else `<state dir>/run`. */
export function estopLookupDir(): string {
  if (process.env.CORTEX_RUNTIME_DIR) return resolve(process.env.CORTEX_RUNTIME_DIR);
  if (existsSync('/run/cortexd')) return '/run/cortexd';
  return join(stateDir(), 'run');
}

/** The e-stop socket of configuration `configName` in `dir`. */
export function estopSocketPath(dir: string, configName: string): string {
  return join(dir, `estop-${configName}.sock`);
}
