// The conversation survives a restart: kept in the state directory after each answer, restored at start, after a SIGTERM and after kill -9 (never half-written).
import { requireBuild } from '../helpers/requires.js';
import t, { type Test } from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { historyFileOf } from '../../src/cortex/history-store.js';
import { startScriptedUpstream } from '../support/scripted-upstream.js';

requireBuild();

/** The words typed in a prompt: the text between START and END of the typed input. */
const typed = (content: unknown) => /\/\/ START\n([\s\S]*?)\n\/\/ END/.exec(String(content))?.[1];

async function setup(t: Test, persist = true) {
  const upstream = await startScriptedUpstream({
    firstTokenMs: 5,
    tokensPerSecond: 2000,
    answer: (req) => ({ toolCalls: [{ name: 'speak', arguments: { sentence: `You said ${typed(req.messages.at(-1)?.content) ?? 'nothing'}.` } }] }),
  });
  t.teardown(() => upstream.close());
  const w = workDir();
  const config = w.file('memory.json5');
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'memory',
      default_mode: 'talk',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: '',
      system_governance: '',
      cortex_llm: { type: 'LocalLLM', config: { base_url: upstream.baseUrl, history_length: 2, persist_history: persist } },
      modes: {
        talk: {
          display_name: 'Talk',
          description: 'd',
          system_prompt_base: 'You are a robot.',
          hertz: 20,
          agent_inputs: [{ type: 'TextInput', config: { source: 'socket', path: w.socket } }],
          agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
        },
      },
    }),
  );
  const file = historyFileOf(w.state, 'memory', 'talk');
  /** Starts the agent, types `words` one at a time (each waits for its answer); returns the agent. */
  const session = async (words: string[]) => {
    const agent = startAgent(config, w.state);
    t.teardown(() => void agent.child.kill('SIGKILL'));
    for (const word of words) {
      const seen = agent.events.length;
      await typeLines(w.socket, [word]);
      await agent.waitFor((e) => e.type === 'model.answer' && agent.events.indexOf(e) >= seen, 15_000, `the answer to ${word}`);
    }
    return agent;
  };
  /** The typed words of the history messages the model got with the request for `word`. */
  const historyIn = (word: string) => {
    const req = upstream.requests.find((r) => typed(r.body.messages.at(-1)?.content) === word);
    return req?.body.messages.slice(1, -1).map((m) => (m.role === 'user' ? typed(m.content) : m.content));
  };
  return { upstream, w, file, session, historyIn };
}

t.test('after a SIGTERM the next start remembers the conversation; the file is the history, redacted, 0600', async (t) => {
  const s = await setup(t);
  const first = await s.session(['alpha', 'bravo key_live_abcdefghijklmnopqrstuvwxyz0123456789']);
  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0);
  t.ok(existsSync(s.file), `the history is kept in ${s.file}`);
  const saved = JSON.parse(readFileSync(s.file, 'utf8')) as { version: number; exchanges: Array<{ prompt: string; answer: string }> };
  t.equal(saved.version, 1);
  t.same(
    saved.exchanges.map((e) => typed(e.prompt)),
    ['alpha', 'bravo key_live_[REDACTED]'],
    'both exchanges, the key redacted as in logs',
  );
  t.match(saved.exchanges[0]!.answer, /You said alpha/);
  t.equal((await import('node:fs')).statSync(s.file).mode & 0o777, 0o600);

  const second = await s.session(['charlie']);
  t.same(
    s.historyIn('charlie'),
    ['alpha', '[speak {"sentence":"You said alpha."}]', 'bravo key_live_[REDACTED]', '[speak {"sentence":"You said bravo key_live_[REDACTED]."}]'],
    'restored and sent with the first request',
  );
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});

t.test('kill -9 at any moment leaves the old history or the new one, never a torn file; the next start restores it', async (t) => {
  const s = await setup(t);
  for (let round = 0; round < 4; round++) {
    const agent = await s.session([`round${round}a`]);
    // The a answer is written in the thread pool a moment after it came (on a loaded disk, after a while).
    const hasA = () => {
      try {
        return (JSON.parse(readFileSync(s.file, 'utf8')) as { exchanges: Array<{ prompt: string }> }).exchanges.some(
          (e) => typed(e.prompt) === `round${round}a`,
        );
      } catch {
        return false;
      }
    };
    for (const end = Date.now() + 15_000; !hasA() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    // More answers coming while the process is killed: writes are in flight.
    await typeLines(s.w.socket, [`round${round}b`, `round${round}c`]);
    await agent.waitFor((e) => e.type === 'model.answer' && JSON.stringify(e.tool_calls).includes(`You said round${round}b`), 15_000, 'the b answer');
    agent.child.kill('SIGKILL');
    await agent.exited;
    const text = readFileSync(s.file, 'utf8');
    const saved = JSON.parse(text) as { version: number; exchanges: Array<{ prompt: string }> };
    t.equal(saved.version, 1, `round ${round}: the file parses after kill -9`);
    t.ok(
      saved.exchanges.some((e) => typed(e.prompt) === `round${round}a`),
      `round ${round}: the answer before the kill is kept`,
    );
  }
  const last = await s.session(['after']);
  const history = s.historyIn('after') ?? [];
  t.ok(
    history.some((h) => /round3/.test(String(h))),
    `the last round is remembered (${history.filter((h, i) => i % 2 === 0).join(', ')})`,
  );
  // Checked once the last agent has stopped: while it runs, its own write after an answer may be in flight.
  last.child.kill('SIGTERM');
  await last.exited;
  t.same(
    readdirSync(join(s.file, '..')).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file is left: those of the killed runs were removed at start',
  );
});

t.test('persist_history: false keeps nothing', async (t) => {
  const s = await setup(t, false);
  const agent = await s.session(['alpha']);
  agent.child.kill('SIGTERM');
  await agent.exited;
  t.notOk(existsSync(s.file), 'no history file');
});
