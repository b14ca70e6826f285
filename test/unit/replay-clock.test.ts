// The replay's clock fires each timer at its own due time, earliest first, stops at every due time on the way, and cannot be held still by a timer that re-arms at 0 ms.
import t from 'tap';
import { ReplayClock } from '../../actors/replay/replay-clock.js';

const settle = async () => {
  await new Promise<void>((resolve) => setImmediate(resolve));
};

t.test('a timer fires at its due time, not at the end of a step', async (t) => {
  const clock = new ReplayClock();
  const fired: Array<[string, number]> = [];
  clock.setTimeout(() => fired.push(['answer', clock.now()]), 57);
  clock.setTimeout(() => fired.push(['tick', clock.now()]), 100);
  await clock.advanceTo(100, 100, settle);
  t.same(fired, [
    ['answer', 57],
    ['tick', 100],
  ]);
  t.equal(clock.now(), 100);
});

t.test('timers set while one fires, and ties, fire in due order then in the order set', async (t) => {
  const clock = new ReplayClock();
  const fired: string[] = [];
  clock.setTimeout(() => {
    fired.push('a@10');
    clock.setTimeout(() => fired.push('c@15'), 5);
    clock.setTimeout(() => fired.push('d@10'), 0);
  }, 10);
  clock.setTimeout(() => fired.push('b@10'), 10);
  clock.setTimeout(() => fired.push('e@30'), 30);
  await clock.advanceTo(20, 100, settle);
  t.same(fired, ['a@10', 'b@10', 'd@10', 'c@15'], 'e@30 is not due yet');
  t.equal(clock.now(), 20);
});

t.test('a cleared timer never fires; time never runs backwards', async (t) => {
  const clock = new ReplayClock();
  let fired = false;
  const id = clock.setTimeout(() => (fired = true), 5);
  clock.clearTimeout(id);
  await clock.advanceTo(50, 10, settle);
  t.equal(fired, false);
  await clock.advanceTo(20, 10, settle);
  t.equal(clock.now(), 50, 'advancing to an earlier time leaves the clock where it is');
});

t.test('without timers, time moves in steps of at most maxStepMs, settling after each', async (t) => {
  const clock = new ReplayClock();
  const seen: number[] = [];
  await clock.advanceTo(250, 100, async () => void seen.push(clock.now()));
  t.same(seen, [100, 200, 250]);
});

t.test('a timer that re-arms itself at 0 ms cannot hold time still', async (t) => {
  const clock = new ReplayClock();
  let fires = 0;
  const again = () => {
    fires++;
    clock.setTimeout(again, 0);
  };
  clock.setTimeout(again, 0);
  await clock.advanceTo(30, 10, settle);
  t.equal(clock.now(), 30, 'time reached its target');
  t.ok(fires > 0);
});
