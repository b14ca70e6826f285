// Finding programs on PATH, as a shell would, without running one.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The first executable named `name` in the directories of `path` (default $PATH), or undefined. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here: keep looking
    }
  }
  return undefined;
}
