// What a test file needs of this machine (the build, Debian tools); missing, the file fails with the fix instead of skipping in silence.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** Throws unless `npm run build` has produced the CLI (and the WebSim page, when asked). */
export function requireBuild(what: { page?: boolean } = {}): void {
  const missing = [join(ROOT, 'dist', 'cli', 'main.js'), ...(what.page ? [join(ROOT, 'dist', 'websim', 'app.js')] : [])].filter((f) => !existsSync(f));
  if (missing.length) throw new Error(`${missing.join(', ')} missing: run \`npm run build\` before these tests`);
}

/** Throws unless every command is on PATH (scripts/setup.sh --tests installs them). */
export function requireCommands(commands: readonly string[]): void {
  const missing = commands.filter((c) => spawnSync('sh', ['-c', `command -v ${c}`]).status !== 0);
  if (missing.length) throw new Error(`missing on PATH: ${missing.join(', ')} (bash scripts/setup.sh --tests installs them)`);
}

/** Throws unless `file` exists. */
export function requireFile(file: string, install: string): void {
  if (!existsSync(file)) throw new Error(`${file} is missing (${install})`);
}
