// The knowledge_base and memory blocks: native and OM1 names, a relative root relative to the configuration file, OM1's base_url (its embedding server) named as not called.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertOm1 } from '../../src/compat/om1/convert.js';
import { loadAs } from '../../src/compat/om1/load.js';
import { loadConfig } from '../../src/config/load.js';
import { knowledgeSettings } from '../../src/config/memory.js';
import { ConfigError } from '../../src/errors.js';

const base = (extra: string) => `{
  version: "v1.0.5", name: "guide", default_mode: "guide", allow_manual_switching: true, mode_memory_enabled: false,
  api_key: "k", system_governance: "obey",
  cortex_llm: { type: "LocalLLM", config: { base_url: "http://127.0.0.1:9/v1" } },
  ${extra}
  modes: { guide: { display_name: "Guide", description: "d", system_prompt_base: "p", hertz: 1,
    agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] } },
}`;

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-kbcfg-'));
  const path = join(dir, 'guide.json5');
  writeFileSync(path, text);
  return path;
}

t.test('a native file names a knowledge folder relative to itself, with OM1 names or the short ones', async (t) => {
  const path = file(base('knowledge_base: { knowledge_base_name: "museum", knowledge_base_root: "docs/museum", top_k: 4 }, memory: { enabled: true },'));
  const loaded = await loadConfig({ file: path }, { env: {}, plugins: false });
  const kb = knowledgeSettings(loaded.config.knowledge_base, loaded.file)!;
  t.match(kb, { name: 'museum', root: join(path, '..', 'docs', 'museum'), topK: 4, minScore: 0.35 });
  t.equal(loaded.config.memory?.enabled, true);
  t.equal(loaded.config.memory?.max_memories, 2000, 'memory is bounded by default');

  const short = await loadConfig({ file: file(base('knowledge_base: { root: "/srv/docs" },')) }, { env: {}, plugins: false });
  t.match(knowledgeSettings(short.config.knowledge_base, short.file), { name: 'docs', root: '/srv/docs' }, 'an absolute root; the name defaults to the folder');
});

t.test('a knowledge_base without a folder, or with a bad top_k, is a problem naming the field', async (t) => {
  const err = await loadConfig({ file: file(base('knowledge_base: { top_k: 0 },')) }, { env: {}, plugins: false }).catch((e: unknown) => e);
  t.ok(err instanceof ConfigError);
  const lines = (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
  t.ok(
    lines.some((l) => l.startsWith('knowledge_base.knowledge_base_root') && /folder/.test(l)),
    lines.join('\n'),
  );
  t.ok(
    lines.some((l) => l.startsWith('knowledge_base.top_k')),
    'top_k below 1 is refused',
  );
});

t.test("OM1's blocks load with --om1: the folder is indexed locally (OM1's own folder when none is named), base_url is named as not called", async (t) => {
  const om1 = convertOm1({
    hertz: 1,
    name: 'x',
    knowledge_base: { knowledge_base_name: 'demo', knowledge_base_root: 'kb', base_url: 'https://api.example/kb', top_k: 3, min_score: 0.4 },
    memory: { enabled: true },
  });
  t.same(om1.missing, []);
  t.match(om1.translations.join('\n'), /knowledge_base\.base_url: .*OM1's embedding server is not called: passages are found by their words here/);
  t.match(om1.translations.join('\n'), /memory: enabled: true -> the runtime's memory/);
  t.same(om1.config.knowledge_base, { knowledge_base_name: 'demo', knowledge_base_root: 'kb', top_k: 3, min_score: 0.4 });

  const serviceOnly = convertOm1({ hertz: 1, name: 'x', knowledge_base: { knowledge_base_name: 'demo', base_url: 'https://api.example/kb' } });
  // OM1 keeps the texts in knowledge_base/NAME/ of its checkout (beside config/): that folder is the root.
  t.same(serviceOnly.missing, []);
  t.same(serviceOnly.config.knowledge_base, { knowledge_base_name: 'demo', knowledge_base_root: '../knowledge_base/demo' });

  const path = file(
    base('knowledge_base: { knowledge_base_name: "m", knowledge_base_root: "docs", base_url: "https://api.example/kb" }, memory: { enabled: true },'),
  );
  const { loaded, om1: report } = await loadAs({ file: path }, { om1: true, plugins: false, env: {} });
  t.ok(report!.translations.some((l) => l.startsWith('knowledge_base')));
  t.match(knowledgeSettings(loaded.config.knowledge_base, loaded.file), { name: 'm', root: join(path, '..', 'docs') });
});
