// TextInput's bounds: a line over max_line_length is refused whole with a count in the log, and the inbox keeps at most buffer_size lines between ticks.
import t, { type Test as Tap } from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { TextInput, TextInputOptions } from '../../actors/inputs/text-input.js';

function input(_t: Tap, config: Record<string, unknown>) {
  const logged: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(String(JSON.parse(line).msg)) });
  const ti = new TextInput(TextInputOptions.parse({ source: 'socket', path: join(mkdtempSync(join(tmpdir(), 'cortexd-text-cap-')), 'in.sock'), ...config }), {
    logger,
    signal: new AbortController().signal,
  });
  // The input actor's part: every raw line goes through rawToText; only pushed lines here.
  const sub = ti.listen().subscribe((raw) => ti.rawToText(raw));
  return { ti, logged, stop: () => (sub.unsubscribe(), ti.stop()) };
}

t.test('a line over max_line_length is refused whole, never cut; the log says so with the count', async (t) => {
  const { ti, logged, stop } = input(t, { max_line_length: 20 });
  t.teardown(stop);
  ti.acceptText('short and fine');
  ti.acceptText('x'.repeat(21));
  ti.acceptText('y'.repeat(500));
  t.equal(ti.refused, 2);
  t.equal(ti.formattedLatestBuffer(), `${ti.descriptor}: short and fine`, 'only the line within the cap reaches the prompt');
  t.match(logged[0], /typed line refused: 21 characters, at most 20 \(max_line_length\); 1 refused so far/);
});

t.test('the inbox keeps the newest buffer_size lines between ticks and counts the rest', async (t) => {
  const { ti, stop } = input(t, { buffer_size: 3 });
  t.teardown(stop);
  for (let i = 0; i < 10; i++) ti.acceptText(`line ${i}`);
  t.equal(ti.dropped, 7);
  t.equal(ti.formattedLatestBuffer(), `${ti.descriptor}: line 7\nline 8\nline 9`);
});
