// Proves LinkEnd, the listeners of one run of a device: its proof of health and its end reach every listener once, also one that subscribed after them.
import t from 'tap';
import type { LinkEvent } from '../../src/cloud/link.js';
import { LinkEnd } from '../../devices/device-link.js';

const flush = () => new Promise<void>((r) => queueMicrotask(r));

t.test('proven and ended reach listeners before and after, each once, in that order', async (t) => {
  const end = new LinkEnd();
  const early: LinkEvent[] = [];
  end.subscribe((e) => early.push(e));
  end.proven();
  end.proven();
  end.end({ type: 'close', code: 4000, reason: 'recorder exited' });
  end.end({ type: 'close', code: 4000, reason: 'a second end' });
  const late: LinkEvent[] = [];
  end.subscribe((e) => late.push(e));
  await flush();
  const expected = [
    { type: 'message', message: { proven: true } },
    { type: 'close', code: 4000, reason: 'recorder exited' },
  ];
  t.same(early, expected);
  t.same(late, expected, 'a listener that came after both hears both, in order');
});

t.test('a run that ended before it proved anything is not proven afterwards', async (t) => {
  const end = new LinkEnd();
  end.end({ type: 'close', code: 4000, reason: 'exited at once' });
  end.proven();
  const heard: LinkEvent[] = [];
  end.subscribe((e) => heard.push(e));
  await flush();
  t.same(heard, [{ type: 'close', code: 4000, reason: 'exited at once' }]);
});
