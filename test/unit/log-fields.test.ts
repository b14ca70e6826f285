// Proves a JSON log line names each bound field once, even when nested owners bind the same field (journald readers keep one value).
import t from 'tap';
import { childWith, createLogger } from '../../src/log.js';

t.test('childWith leaves out fields the logger already carries with the same value', async (t) => {
  const raw: string[] = [];
  const root = createLogger({ pretty: false, destination: { write: (s: string) => void raw.push(s) } });
  const mode = root.child({ mode: 'idle' });
  childWith(mode, { mode: 'idle', hook: 'on_entry' }).info('one');
  childWith(mode, { mode: 'sleep' }).info('two');
  t.equal(raw[0]!.match(/"mode":/g)?.length, 1, 'mode once');
  t.match(JSON.parse(raw[0]!), { mode: 'idle', hook: 'on_entry', msg: 'one' });
  t.equal(JSON.parse(raw[1]!).mode, 'sleep', 'a different value is still bound');
  t.equal(childWith(mode, { mode: 'idle' }), mode, 'nothing new: the same logger');
});
