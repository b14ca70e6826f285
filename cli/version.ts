// The runtime's version: read from package.json, the one place it is written.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/paths.js';

/** The version in package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
