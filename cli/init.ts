// `cortexd init NAME [--template companion|serial-robot|voice|mcp]`: writes config/NAME.json5 in the working directory
// The file is a commented configuration to start from, and it passes `cortexd check`.
import { closeSync, constants, cpSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { configDir, projectRoot, shippedConfigDir } from '../src/paths.js';
import { checkOne } from './check.js';
import { EXIT, errLine, out } from './output.js';

/** Each template is a shipped configuration: tested by the suite, commented for a reader, runnable here. */
export const TEMPLATES = {
  companion: {
    file: 'default.json5',
    about: 'a companion that runs offline on any machine: typed text, simulated microphone and camera, speech into WAV files',
  },
  'serial-robot': { file: 'serial_robot.json5', about: 'a robot body on a serial motor controller, with a battery, behind the safety governor' },
  voice: { file: 'conversation.json5', about: 'a voice companion: microphone, speech recognition, a speaker (embedded service until CORTEX_BASE_URL is set)' },
  mcp: { file: 'mcp_tools.json5', about: 'an assistant that uses the tools of an MCP server' },
} as const;
export type TemplateName = keyof typeof TEMPLATES;

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** A path as printed: relative to the working directory when inside it. */
function displayName(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** The template's text with its name replaced by `name` and a first comment saying where it came from and what to do next. */
export function templateText(template: TemplateName, name: string, targetDir: string = configDir()): string {
  const shipped = shippedConfigDir();
  const source = readFileSync(join(shipped, TEMPLATES[template].file), 'utf8');
  let renamed = source.replace(/^(\s*)name: "[^"]*",/m, `$1name: "${name}",`);
  // Written elsewhere than the shipped config/ (the user's folder): the shipped media and the project's node_modules by their full paths.
  if (resolve(targetDir) !== resolve(shipped)) {
    renamed = renamed.replaceAll('${CONFIG_DIR}/media/', `${shipped}/media/`).replaceAll('"../node_modules/', `"${join(projectRoot(), 'node_modules')}/`);
  }
  const head = [
    `// ${name}: made by \`cortexd init ${name} --template ${template}\` (${TEMPLATES[template].about}).`,
    `// Check it with \`cortexd check ${name}\`, run it with \`cortexd run ${name}\`; the comments below say what each part does.`,
    '// A mode is a block under `modes`: a prompt, a rate (hertz), inputs, actions, hooks; transition_rules switch between modes.',
    '',
  ].join('\n');
  return head + renamed;
}

/** Where `file` points when it is a symbolic link (dangling or not), else undefined. */
function symlinkTarget(file: string): string | undefined {
  try {
    return lstatSync(file).isSymbolicLink() ? readlinkSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes NAME.json5 from a template into the user's configuration directory (`config/` here, or
 * CORTEX_CONFIG_DIR), creating the directory, and checks it; exit 2 for a bad name or template, 1 when
 * the file exists or the directory cannot be made.
 */
export async function runInit(name: string, opts: { template?: string; force?: boolean }): Promise<number> {
  const template = (opts.template ?? 'companion') as TemplateName;
  if (!Object.hasOwn(TEMPLATES, template)) {
    errLine(`cortexd init: unknown template ${JSON.stringify(opts.template)}; known: ${Object.keys(TEMPLATES).join(', ')}`);
    return EXIT.invalid;
  }
  if (!NAME_RE.test(name)) {
    errLine(`cortexd init: not a configuration name: ${JSON.stringify(name)} (letters, digits, _ and - only)`);
    return EXIT.invalid;
  }
  const dir = configDir();
  const from = process.env.CORTEX_CONFIG_DIR ? 'CORTEX_CONFIG_DIR' : 'the working directory';
  if (!existsSync(dir)) {
    try {
      mkdirSync(dir, { recursive: true });
      out(`created ${displayName(dir)}/ (${from}) for your configurations`);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : ((err as Error).message ?? String(err));
      errLine(`cortexd init: cannot create ${dir} (${from}): ${why}; pick a folder you can write, e.g. CORTEX_CONFIG_DIR=~/robot/config`);
      return EXIT.failure;
    }
  }
  const file = join(dir, `${name}.json5`);
  const link = symlinkTarget(file);
  if (link !== undefined) {
    errLine(`cortexd init: ${file} is a symbolic link (to ${link}); init never writes through a link, even with --force: remove the link first`);
    return EXIT.failure;
  }
  if (existsSync(file) && !opts.force) {
    errLine(`cortexd init: ${displayName(file)} exists; pick another name, or --force to replace it`);
    return EXIT.failure;
  }
  // O_NOFOLLOW: a link made between the check above and this open is refused too (ELOOP), never followed.
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (opts.force ? constants.O_TRUNC : constants.O_EXCL), 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    errLine(
      `cortexd init: cannot write ${file}: ${code === 'ELOOP' ? 'it became a symbolic link; init never writes through a link' : code === 'EEXIST' ? 'it exists; pick another name, or --force to replace it' : (err as Error).message}`,
    );
    return EXIT.failure;
  }
  try {
    writeFileSync(fd, templateText(template, name, dir));
  } finally {
    closeSync(fd);
  }
  // The template's function hooks (config/hooks/), beside the new file when it is written elsewhere; existing files are kept.
  const hooks = join(shippedConfigDir(), 'hooks');
  if (resolve(dir) !== resolve(shippedConfigDir()) && existsSync(hooks)) cpSync(hooks, join(dir, 'hooks'), { recursive: true, force: false });
  out(`wrote ${displayName(file)} from the ${template} template`);
  const code = await checkOne({ file });
  if (code === EXIT.ok) out(`next: cortexd run ${name}`);
  return code;
}

export function register(program: Command): void {
  program
    .command('init')
    .description('write config/NAME.json5 (in this folder, or CORTEX_CONFIG_DIR) from a commented template that passes check')
    .argument('<name>', 'configuration name (letters, digits, _ and -)')
    .option('--template <template>', `one of ${Object.keys(TEMPLATES).join(', ')} (default companion)`)
    .option('--force', 'replace an existing file')
    .action(async (name: string, opts: { template?: string; force?: boolean }) => {
      process.exitCode = await runInit(name, opts);
    });
}
