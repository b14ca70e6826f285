// `cortexd memory ls | search TEXT | forget ID...|--person NAME | export`: what the robot remembers about people, for the people it is about.
import type { Command } from 'commander';
import type { Memory } from '../src/memory/memories.js';
import { configOptions, type ConfigOptions, loadFor } from './knowledge.js';
import { EXIT, oneLine, out, reportError, UsageError, warnLine } from './output.js';

async function openStore(opts: ConfigOptions) {
  const loaded = await loadFor(opts);
  if (!loaded.config.memory?.enabled) warnLine(`${loaded.file}: memory is not enabled (memory: {enabled: true}); showing what is kept from before`);
  const { MemoryStore, memoryFileOf } = await import('../src/memory/memories.js');
  const { stateDir } = await import('../src/paths.js');
  const { DEFAULT_MAX_MEMORIES } = await import('../src/config/memory.js');
  const store = new MemoryStore(memoryFileOf(stateDir(), loaded.configName), loaded.config.memory?.max_memories ?? DEFAULT_MAX_MEMORIES);
  if (store.recovered) warnLine(`memory: ${store.recovered}`);
  return store;
}

const line = (m: Memory) =>
  `${String(m.id).padStart(5)}  ${m.kind.padEnd(7)}  ${(m.person || '-').padEnd(14)}  ${m.created_at.slice(0, 19).replace('T', ' ')}  ${m.score !== undefined ? `${m.score.toFixed(3)}  ` : ''}${oneLine(m.text)}`;

/** Runs `body` with the store open; closes it and sets the exit code. */
async function withStore(opts: ConfigOptions, body: (store: Awaited<ReturnType<typeof openStore>>) => void): Promise<void> {
  try {
    const store = await openStore(opts);
    try {
      body(store);
    } finally {
      store.close();
    }
    process.exitCode = EXIT.ok;
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

export function register(program: Command): void {
  const memory = program.command('memory').description('what the robot remembers across restarts: facts people told it, places, conversation summaries');

  configOptions(
    memory
      .command('ls')
      .description('list the memories: id, kind, person, time, text')
      .option('--person <name>', "only this person's")
      .option('--json', 'one JSON object per memory'),
  ).action((opts: ConfigOptions & { person?: string; json?: boolean }) =>
    withStore(opts, (store) => {
      const all = store.list(opts.person ? { person: opts.person } : {});
      for (const m of all) out(opts.json ? JSON.stringify(m) : line(m));
      if (!opts.json) out(`${all.length} memor${all.length === 1 ? 'y' : 'ies'} in ${store.file}`);
    }),
  );

  configOptions(
    memory
      .command('search')
      .description('the memories a turn that heard TEXT would get, with their scores')
      .argument('<text...>', 'what was heard')
      .option('--json', 'one JSON object per memory'),
  ).action((words: string[], opts: ConfigOptions & { json?: boolean }) =>
    withStore(opts, (store) => {
      const found = store.find(words.join(' '), { topK: 10, minScore: 0.3 });
      for (const m of found) out(opts.json ? JSON.stringify(m) : line(m));
      if (!opts.json && found.length === 0) out('(no memory fits)');
    }),
  );

  configOptions(
    memory
      .command('forget')
      .description('forget memories by id, or everything of one person; removed from the index and the file')
      .argument('[id...]', 'memory ids (from `memory ls`)')
      .option('--person <name>', "forget all of this person's memories"),
  ).action(async (ids: string[], opts: ConfigOptions & { person?: string }) => {
    const numbers = ids.map((s) => Number(s));
    if (numbers.some((n) => !Number.isInteger(n) || n <= 0)) {
      process.exitCode = reportError(new UsageError(`not a memory id: ${ids.find((s) => !(Number.isInteger(Number(s)) && Number(s) > 0))}`));
      return;
    }
    if (numbers.length === 0 && !opts.person) {
      process.exitCode = reportError(new UsageError('name memory ids or --person NAME'));
      return;
    }
    await withStore(opts, (store) => {
      const n = store.forget(numbers) + (opts.person ? store.forgetPerson(opts.person) : 0);
      out(`forgot ${n} memor${n === 1 ? 'y' : 'ies'}`);
    });
  });

  configOptions(memory.command('export').description('every memory as one JSON document on standard output')).action((opts: ConfigOptions) =>
    withStore(opts, (store) => {
      out(JSON.stringify({ version: 1, file: store.file, exported_at: new Date().toISOString(), memories: store.list() }, null, 2));
    }),
  );
}
