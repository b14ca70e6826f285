// Relative paths of a configuration resolved against its own directory (not the working directory), and the ones that name no file reported before start.
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { AgentConfig } from './schema.js';

export interface PathProblem {
  path: Array<PropertyKey>;
  message: string;
}

/** An argument that names a file: `./x`, `../x`, or a script (`dist/index.js`, `server.py`); never an option or a package name. */
export function looksLikeFile(arg: string): boolean {
  if (arg.startsWith('-') || arg.startsWith('@') || arg.includes('://')) return false;
  return arg.startsWith('./') || arg.startsWith('../') || /\.(m?js|cjs|ts|py|sh)$/.test(arg);
}

/**
 * Gives each stdio tool server its working directory: its `cwd` resolved against the configuration's
 * directory, or that directory. So `args: ["../node_modules/x/dist/index.js"]` means the same file
 * whichever directory `cortexd run` was started from (systemd starts services in /).
 */
export function resolveServerDirs(config: AgentConfig, configDir: string): AgentConfig {
  const modes = Object.fromEntries(
    Object.entries(config.modes).map(([name, mode]) => [
      name,
      {
        ...mode,
        mcp_servers: mode.mcp_servers.map((s) =>
          s.transport === 'stdio' ? { ...s, cwd: s.cwd && isAbsolute(s.cwd) ? s.cwd : resolve(configDir, s.cwd ?? '.') } : s,
        ),
      },
    ]),
  );
  return { ...config, modes };
}

/** Stdio servers whose working directory, command or script argument is not there, with the resolved path shown. */
export function missingServerFiles(config: AgentConfig): PathProblem[] {
  const problems: PathProblem[] = [];
  for (const [name, mode] of Object.entries(config.modes)) {
    mode.mcp_servers.forEach((s, i) => {
      if (s.transport !== 'stdio' || !s.cwd) return;
      const at = ['modes', name, 'mcp_servers', i];
      const note = `(relative paths are resolved against ${s.cwd})`;
      if (!existsSync(s.cwd)) {
        problems.push({ path: [...at, 'cwd'], message: `directory ${s.cwd} does not exist` });
        return;
      }
      if (s.command && !isAbsolute(s.command) && s.command.includes('/') && !existsSync(resolve(s.cwd, s.command))) {
        problems.push({ path: [...at, 'command'], message: `${JSON.stringify(s.command)} not found: no file ${resolve(s.cwd, s.command)} ${note}` });
      }
      s.args.forEach((arg, j) => {
        if (!looksLikeFile(arg)) return;
        const file = resolve(s.cwd!, arg);
        if (!existsSync(file)) problems.push({ path: [...at, 'args', j], message: `${JSON.stringify(arg)} not found: no file ${file} ${note}` });
      });
    });
  }
  return problems;
}
