// Every JSON5 example of docs/*.md is what the page says it is: put where the page says it goes (a top-level key, a mode's model, an input or an action) into a shipped configuration, the result passes `cortexd check`'s loader.
import t from 'tap';
import { TOPIC_PAGES } from '../helpers/docs-pages.js';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import JSON5 from 'json5';
import { loadConfig } from '../../src/config/load.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BASE = join(ROOT, 'config', 'conversation.json5');

/** The ```json5 blocks of a Markdown text, with the line each starts on. */
function json5Blocks(text: string): { line: number; code: string }[] {
  const out: { line: number; code: string }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```json5\s*$/.test(lines[i] ?? '')) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end] ?? '')) end++;
    out.push({ line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return out;
}

/** A block as a value: an object literal as written, or `key: value, ...` (a part of a file) wrapped into one. */
function parseBlock(code: string): Record<string, unknown> {
  return (code.trimStart().startsWith('{') ? JSON5.parse(code) : JSON5.parse(`{${code}}`)) as Record<string, unknown>;
}

type Config = Record<string, unknown> & { default_mode: string; modes: Record<string, Record<string, unknown>> };

/** `base` with the example where its page says it goes. */
function placed(base: Config, example: Record<string, unknown>): Config {
  const config = structuredClone(base);
  const mode = config.modes[config.default_mode]!;
  if (typeof example.type === 'string' && 'config' in example && /Input$/.test(example.type)) {
    mode.agent_inputs = [...((mode.agent_inputs as unknown[]) ?? []), example];
  } else if (typeof example.connector === 'string') {
    mode.agent_actions = [...((mode.agent_actions as unknown[]) ?? []), example];
  } else if ('cortex_llm' in example) {
    Object.assign(mode, example);
  } else Object.assign(config, example);
  return config;
}

const dir = mkdtempSync(join(tmpdir(), 'cortexd-docs-examples-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
// What the knowledge base example names: a folder of one page beside the configuration.
mkdirSync(join(dir, 'knowledge', 'museum'), { recursive: true });
writeFileSync(join(dir, 'knowledge', 'museum', 'hours.md'), '# Hours\n\nThe museum opens at nine.\n');

const base = JSON5.parse(readFileSync(BASE, 'utf8')) as Config;
let examples = 0;
for (const page of TOPIC_PAGES) {
  for (const { line, code } of json5Blocks(readFileSync(join(ROOT, page), 'utf8'))) {
    examples++;
    t.test(`${page}:${line}`, async (t) => {
      const example = parseBlock(code);
      const file = join(dir, `example-${page.replace(/\W/g, '_')}-${line}.json5`);
      writeFileSync(file, JSON.stringify(placed(base, example), null, 2));
      const loaded = await loadConfig({ file }, { env: { LOCAL_LLM_URL: '', LOCAL_LLM_MODEL: '' } }).catch((err: Error) => err);
      t.notOk(loaded instanceof Error, loaded instanceof Error ? loaded.message : 'loads');
    });
  }
}
t.ok(examples >= 6, `the docs hold ${examples} JSON5 examples`);
