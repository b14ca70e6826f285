// whenMatched: a DDS endpoint's first match is awaited on its count's event: at once when matched, on the count's change, false after the wait, the signal's reason on abort.
import t from 'tap';
import { BehaviorSubject } from 'rxjs';
import { whenMatched } from '../../devices/dds/matched.js';

t.test('already matched: true at once', async (t) => {
  t.equal(await whenMatched(new BehaviorSubject(1), 0), true);
});

t.test('matched later: true on the count change, before the wait ends', async (t) => {
  const count = new BehaviorSubject(0);
  const waiting = whenMatched(count, 60_000);
  setImmediate(() => count.next(2));
  t.equal(await waiting, true);
});

t.test('never matched: false once the wait is over', async (t) => {
  t.equal(await whenMatched(new BehaviorSubject(0), 30), false);
});

t.test('aborted: rejects with the signal reason, also when aborted before', async (t) => {
  const controller = new AbortController();
  const waiting = whenMatched(new BehaviorSubject(0), 60_000, controller.signal);
  controller.abort(new Error('halted'));
  await t.rejects(waiting, { message: 'halted' });
  await t.rejects(whenMatched(new BehaviorSubject(1), 0, controller.signal), { message: 'halted' });
});
