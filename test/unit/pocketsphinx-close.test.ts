// A recognizer closed while it writes utterance files and FIFOs never throws and leaves no directory behind (the local service's socket close handler calls it).
import t from 'tap';
import { readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PocketsphinxRecognizer } from '../../src/service/backends/pocketsphinx.js';
import { requireCommands } from '../helpers/requires.js';

requireCommands(['pocketsphinx_continuous']);

const asrDirs = (): string[] => readdirSync(tmpdir()).filter((n) => n.startsWith('cortexd-asr-'));

async function gone(dirs: string[]): Promise<string[]> {
  const deadline = Date.now() + 10_000; // hang guard: removals run once the writes settle
  let left = dirs.filter((d) => asrDirs().includes(d));
  while (left.length && Date.now() < deadline) {
    await sleep(50);
    left = dirs.filter((d) => asrDirs().includes(d));
  }
  return left;
}

t.test('close while utterance files are being created: no exception, and the directory goes once the writes settle', async (t) => {
  const made: string[] = [];
  const pcm = Buffer.alloc(16000 * 2); // one second of silence
  for (let round = 0; round < 2; round++) {
    const before = new Set(asrDirs());
    const rec = new PocketsphinxRecognizer({ grammar: 'open' });
    const [dir] = asrDirs().filter((n) => !before.has(n));
    made.push(dir!);
    // A crowded directory makes a recursive remove slow, so files created meanwhile land mid-walk
    // (what a loaded machine does to a short walk: ENOTEMPTY from a socket's close handler).
    for (let i = 0; i < 4000; i++) writeFileSync(join(tmpdir(), dir!, `x${i}`), '');
    const abort = new AbortController();
    const decodes = Array.from({ length: 16 }, () =>
      rec.decode(pcm, abort.signal).then(
        () => 'done',
        (e: Error) => e.message,
      ),
    );
    rec.prewarm();
    t.doesNotThrow(() => rec.close(), `round ${round}: close does not throw`);
    abort.abort();
    for (const outcome of await Promise.all(decodes)) t.type(outcome, 'string');
  }
  t.same(await gone(made), [], 'every recognizer directory was removed');
});
