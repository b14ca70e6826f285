// WebSim shows times as times: a context value named *_at (epoch ms, e.g. last_utterance_at) is a date and time, other values stay JSON.
import t from 'tap';
import { shownValue } from '../../src/websim/page/show.js';

t.test('a *_at value in epoch ms is shown as a date and time; others as JSON', async (t) => {
  const at = Date.UTC(2026, 10, 25, 20, 31, 7);
  t.equal(shownValue('last_utterance_at', at), new Date(at).toLocaleString());
  t.notMatch(shownValue('last_utterance_at', at), /^\d{13}$/);
  t.equal(shownValue('count', at), String(at), 'a number not named as a time stays a number');
  t.equal(shownValue('last_utterance_at', 'never'), '"never"');
});
