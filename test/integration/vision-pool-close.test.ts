// Proves the vision pool's stop: a frame in the worker when the pool closes fails at once with "the service is stopping", and the process then exits by itself (nothing of the pool keeps it alive).
import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tsLoaderArgs } from '../helpers/ts-loader.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/service/vision-pool-close.ts', import.meta.url));

/** Runs the fixture; resolves with its output and exit code, or with `hung` if it is still running after `ms` (then killed). */
function run(delayMs: number, ms = 60_000): Promise<{ out: string; code: number | null; hung: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...tsLoaderArgs, FIXTURE, String(delayMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const guard = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', (code, signal) => {
      clearTimeout(guard);
      resolve({ out, code, hung: signal === 'SIGKILL' });
    });
  });
}

for (const delayMs of [0, 20]) {
  t.test(`closing the pool ${delayMs} ms after a frame went to its worker`, async (t) => {
    const r = await run(delayMs);
    t.notOk(r.hung, 'the process exited by itself once the pool was closed');
    t.equal(r.code, 0);
    t.same(JSON.parse(r.out.trim() || '{}'), { first: 'analysed', second: 'Error: the service is stopping' }, 'the frame in flight failed, naming why');
  });
}
