// Proves the producers of OM1's context keys: the conversation action publishes greeting_conversation_finished after a finished turn; presence sets approaching_detected when a face arrives.
import t from 'tap';
import pino from 'pino';
import { createConversationConnector } from '../../actors/actions/connectors/conversation.js';
import { presenceValues } from '../../actors/backgrounds/presence.js';

t.test('a conversation turn is said, then its state is published under the configured keys', async (t) => {
  const lines: string[] = [];
  const published: Array<Record<string, unknown>> = [];
  const c = createConversationConnector('console')(
    { finished_key: 'greeting_conversation_finished', state_key: 'greeting_conversation_state' },
    { logger: pino({ level: 'silent' }), stateDir: '/tmp', write: (l) => lines.push(l), publishContext: (v) => published.push(v) },
  );
  const signal = new AbortController().signal;
  await c.run({ response: 'Hello there!', conversation_state: 'conversing' }, signal);
  await c.run({ response: 'Goodbye!', conversation_state: 'finished' }, signal);
  t.same(lines, ['[conversation] Hello there!', '[conversation] Goodbye!']);
  t.same(published, [
    { greeting_conversation_finished: false, greeting_conversation_state: 'conversing' },
    { greeting_conversation_finished: true, greeting_conversation_state: 'finished' },
  ]);
  await t.rejects(c.run({ response: 'x', conversation_state: 'bored' }, signal), 'a state the model may not send is refused');
  t.equal(published.length, 2);
});

t.test('presence: approaching turns true when faces come into view after none, false when none is seen', async (t) => {
  const keys = { present_key: 'person_present', approaching_key: 'approaching_detected' };
  t.same(presenceValues(0, { faces: 1, motion: 'slight' }, keys), { faces: 1, motion: 'slight', person_present: true, approaching_detected: true });
  t.same(presenceValues(1, { faces: 2, motion: 'none' }, keys), { faces: 2, motion: 'none', person_present: true }, 'still there: approach unchanged');
  t.same(presenceValues(2, { faces: 0, motion: 'none' }, keys), { faces: 0, motion: 'none', person_present: false, approaching_detected: false });
});
