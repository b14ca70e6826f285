// Proves mode memory: saved atomically after each switch, restored after a restart, corrupt or stale files reported and ignored.
import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { config, start } from '../fixtures/modes/harness.js';
import { fileModeMemory, modeMemoryPath, readModeMemory } from '../../src/modes/memory.js';

const rules = [
  { from_mode: 'a', to_mode: 'b', transition_type: 'input_triggered', trigger_keywords: ['go'], priority: 1 },
  { from_mode: 'b', to_mode: 'c', transition_type: 'input_triggered', trigger_keywords: ['on'], priority: 1 },
];
const cfg = config({ mode_memory_enabled: true, transition_rules: rules, api_key: 'key_live_supersecretvalue123' });
const tmp = () => mkdtempSync(join(tmpdir(), 'cortexd-memory-'));

t.test('after a restart the agent resumes in the saved mode, with previous mode and transitions', async (t) => {
  const path = modeMemoryPath('test_agent', tmp());
  const store = fileModeMemory(path, (m) => t.fail(m));
  const first = start(cfg, { memory: store });
  await first.active('a');
  first.actor.send({ type: 'input.text', text: 'go' });
  await first.active('b');
  first.actor.send({ type: 'input.text', text: 'go on' });
  await first.active('c');
  first.actor.stop();

  const saved = JSON.parse(readFileSync(path, 'utf8'));
  t.match(saved, { version: 1, config: 'test_agent', current: 'c', previous: 'b' });
  t.same(
    saved.transitions.map((x: { from: string; to: string }) => `${x.from}->${x.to}`),
    ['a->b', 'b->c'],
  );
  t.notOk(readFileSync(path, 'utf8').includes('supersecret'), 'no secrets in the file');
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.same(readdirSync(join(path, '..')), ['test_agent.json'], 'no temporary file left behind');

  const second = start(cfg, { memory: store });
  await second.active('c');
  const ctx = second.actor.getSnapshot().context;
  t.equal(ctx.previous, 'b');
  t.equal(ctx.lastTransition?.to, 'c');
  second.actor.stop();
});

t.test('a corrupt memory file is reported and ignored: the agent starts in default_mode', async (t) => {
  for (const content of ['{not json', JSON.stringify({ version: 1, current: 5 })]) {
    const path = modeMemoryPath('test_agent', tmp());
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, content);
    const m = start(cfg, { memory: fileModeMemory(path, () => {}) });
    await m.active('a');
    t.match(m.of('memory.warning')[0], { message: /is corrupt .* and is ignored/ });
    m.actor.send({ type: 'input.text', text: 'go' });
    await m.active('b');
    t.equal(readModeMemory(path).memory?.current, 'b', 'the next switch replaces the corrupt file');
    m.actor.stop();
  }
});

t.test('a saved mode that no longer exists is reported; the agent starts in default_mode', async (t) => {
  const path = modeMemoryPath('test_agent', tmp());
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, JSON.stringify({ version: 1, config: 'test_agent', current: 'gone', previous: null, transitions: [] }));
  const m = start(cfg, { memory: fileModeMemory(path, () => {}) });
  await m.active('a');
  t.match(m.of('memory.warning')[0], { message: /saved mode "gone" no longer exists/ });
  m.actor.stop();
});

t.test('without mode_memory_enabled nothing is read or written; the default store lives in the state directory', async (t) => {
  const dir = tmp();
  const before = process.env.CORTEX_STATE_DIR;
  const beforeSystemd = process.env.STATE_DIRECTORY;
  process.env.CORTEX_STATE_DIR = dir;
  delete process.env.STATE_DIRECTORY;
  t.teardown(() => {
    if (before === undefined) delete process.env.CORTEX_STATE_DIR;
    else process.env.CORTEX_STATE_DIR = before;
    if (beforeSystemd !== undefined) process.env.STATE_DIRECTORY = beforeSystemd;
  });
  const off = start(config({ transition_rules: rules }), { memory: undefined });
  await off.active('a');
  off.actor.send({ type: 'input.text', text: 'go' });
  await off.active('b');
  off.actor.stop();
  t.notOk(existsSync(join(dir, 'modes')), 'memory disabled: no file');

  const on = start(cfg, { memory: undefined });
  await on.active('a');
  on.actor.send({ type: 'input.text', text: 'go' });
  await on.active('b');
  on.actor.stop();
  t.equal(readModeMemory(join(dir, 'modes', 'test_agent.json')).memory?.current, 'b');
});

t.test('memory file names are safe for any config name', async (t) => {
  t.equal(modeMemoryPath('../../etc/x', '/s'), '/s/modes/__.._etc_x.json', 'no separator, no leading dot');
  t.equal(modeMemoryPath('spot_modes', '/s'), '/s/modes/spot_modes.json');
});
