// The documentation pages the docs tests read: the topic pages under docs/, and those with the README and the quickstart, as repository paths.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's root. */
export const DOCS_ROOT = resolve(import.meta.dirname, '..', '..');

/** The topic pages, `docs/<name>.md`, in name order. */
export const TOPIC_PAGES: readonly string[] = readdirSync(join(DOCS_ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/${f}`);

/** Every page a reader meets: the README, the quickstart and the topic pages. */
export const ALL_PAGES: readonly string[] = ['README.md', 'QUICKSTART.md', ...TOPIC_PAGES];
