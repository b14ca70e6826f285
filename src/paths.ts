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

/**
 * The user's directory of named configurations, where `cortexd init` writes and names are looked up
 * first: `$CORTEX_CONFIG_DIR`, else `config/` in the working directory (a person's own project folder).
 */
export function configDir(): string {
  return process.env.CORTEX_CONFIG_DIR ? resolve(process.env.CORTEX_CONFIG_DIR) : resolve('config');
}

/** The configurations that come with cortexd (`<project>/config`): the templates, `default` and the examples. */
export function shippedConfigDir(): string {
  return join(projectRoot(), 'config');
}

/**
 * Where a configuration name is looked up, in order: `config/` of the working directory, then the
 * shipped one; `$CORTEX_CONFIG_DIR` alone when set (the service's /etc/cortexd/config: nothing else counts).
 */
export function configSearchPath(): string[] {
  return process.env.CORTEX_CONFIG_DIR ? [configDir()] : [...new Set([configDir(), shippedConfigDir()])];
}

/**
 * Where the function hooks of configuration `file` are: `hooks/` beside it when there is one (a
 * person's own folder, which `cortexd init` fills), else the shipped `config/hooks`.
 */
export function hooksDirFor(file: string): string {
  const beside = join(dirname(file), 'hooks');
  return existsSync(beside) ? beside : join(shippedConfigDir(), 'hooks');
}

/** The file of configuration `stem` (no `.json5`): the first directory of the search path that has it. */
export function findConfigFile(stem: string): string | undefined {
  return configSearchPath()
    .map((dir) => join(dir, `${stem}.json5`))
    .find((f) => existsSync(f));
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
