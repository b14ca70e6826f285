// Proves the readable log honours NO_COLOR (https://no-color.org): colour codes by default, none when NO_COLOR is set and not empty.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const logModule = join(import.meta.dirname, '..', '..', 'dist', 'src', 'log.js');
requireBuild();

/** stderr of a process that writes one readable (pino-pretty) warning, as on a terminal. */
function readableLine(env: Record<string, string | undefined>): string {
  const script = `import { createLogger } from ${JSON.stringify(pathToFileURL(logModule).href)};\ncreateLogger({ pretty: true }).warn('battery low');\n`;
  const base = { ...process.env };
  delete base.NO_COLOR;
  delete base.FORCE_COLOR;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...base, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`logger process failed: ${r.stderr}`);
  return r.stderr;
}

t.test('NO_COLOR removes the colour codes of the readable log', async (t) => {
  const ESC = '\u001b[';
  const coloured = readableLine({});
  t.match(coloured, /battery low/);
  t.ok(coloured.includes(ESC), 'without NO_COLOR the level is coloured');

  const plain = readableLine({ NO_COLOR: '1' });
  t.match(plain, /WARN.*battery low/);
  t.notOk(plain.includes(ESC), 'NO_COLOR=1: no escape sequence at all');

  const empty = readableLine({ NO_COLOR: '' });
  t.ok(empty.includes(ESC), 'an empty NO_COLOR does not count (no-color.org)');
});
