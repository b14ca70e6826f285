// `run --events` prints every event as a JSON line with keys, JWTs and bearer tokens in its text redacted as the logs redact them; field names and other text are kept.
import t from 'tap';
import { attachEventLines } from '../../cli/view.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';

t.test('a key typed into a prompt, a bearer token in an answer and a JWT never reach --events output', async (t) => {
  const bus = new AgentBus();
  const lines: string[] = [];
  const sub = attachEventLines(bus, (text) => lines.push(text));
  t.teardown(() => sub.unsubscribe());
  const key = 'key_live_Zx81mQ2pL0vB7nC4rT9w';
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyb2JvdCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
  bus.emit({ type: 'input', at: 1, mode: 'conversation', input: 'text', text: `my key is ${key}, remember it`, final: true } as AgentEvent);
  bus.emit({ type: 'input', at: 2, mode: 'conversation', input: 'text', text: `use Authorization: Bearer ${jwt} please`, final: true } as AgentEvent);
  bus.emit({ type: 'prompt', at: 3, mode: 'conversation', tick: 1, prompt: `INPUT: my key is ${key}` } as AgentEvent);
  bus.emit({ type: 'simulator.ready', at: 3, simulator: 'WebSim', url: 'http://127.0.0.1:8000/', token_file: '/var/lib/cortexd/websim-token' } as AgentEvent);
  t.equal(lines.length, 4, 'one line per event');
  const text = lines.join('');
  t.notMatch(text, key, 'the API key is not printed');
  t.notMatch(text, jwt, 'the JWT is not printed');
  t.match(text, /\[REDACTED\]/, 'they are marked as redacted');
  const first = JSON.parse(lines[0]!) as { text: string };
  t.match(first.text, /^my key is key_live_\[REDACTED\], remember it$/, 'the rest of the line is kept');
  t.match(JSON.parse(lines[2]!), { prompt: 'INPUT: my key is key_live_[REDACTED]' }, 'the fused prompt is redacted');
  t.match(JSON.parse(lines[3]!), { token_file: '/var/lib/cortexd/websim-token' }, 'where the token is kept is not a secret');
});
