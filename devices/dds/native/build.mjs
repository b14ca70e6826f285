// Compiles the DDS addon (cortexd_dds.c) against the system CycloneDDS (cyclonedds-dev) into build/cortexd_dds.node; never fails an install.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'build', 'cortexd_dds.node');
const strict = process.argv.includes('--strict');

function say(line) {
  process.stderr.write(`cortexd-dds: ${line}\n`);
}

function done(code, line) {
  if (line) say(line);
  process.exit(strict ? code : 0);
}

if (/^(1|true|yes)$/.test(process.env.CORTEX_NO_DDS ?? '')) done(0, 'skipped (CORTEX_NO_DDS / setup.sh --no-dds): robots over DDS will not work');

// Node's own headers: next to the node binary (official builds) or Debian's /usr/include/node.
const candidates = [join(dirname(process.execPath), '..', 'include', 'node'), '/usr/include/node', '/usr/include/nodejs/src'];
const nodeInclude = candidates.find((d) => existsSync(join(d, 'node_api.h')));
if (!nodeInclude) done(1, `node_api.h not found (looked in ${candidates.join(', ')}): install Node.js with its headers`);
const arch = execFileSync('gcc', ['-dumpmachine'], { encoding: 'utf8' }).trim();
const ddsIncludes = ['/usr/include', `/usr/include/${arch}`].filter((d) => existsSync(d));
if (!existsSync('/usr/include/dds/dds.h')) done(1, 'CycloneDDS headers not found: sudo apt-get install cyclonedds-dev (or run scripts/setup.sh)');

mkdirSync(join(here, 'build'), { recursive: true });
const args = [
  '-shared',
  '-fPIC',
  '-O2',
  '-Wall',
  '-std=gnu11',
  `-I${nodeInclude}`,
  ...ddsIncludes.map((d) => `-I${d}`),
  join(here, 'cortexd_dds.c'),
  '-o',
  out,
  '-lddsc',
];
try {
  execFileSync('gcc', args, { stdio: 'inherit' });
  say(`built ${out}`);
} catch {
  done(1, `gcc failed: gcc ${args.join(' ')}`);
}
