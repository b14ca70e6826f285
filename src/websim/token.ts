// WebSim's token: how strong one must be, and the generated one kept 0600 in the state directory when none is configured.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CortexError } from '../errors.js';

/** The file in the state directory that holds the generated token. */
export const TOKEN_FILE = 'websim-token';

import { tokenWeakness } from '../plugins/schemas/token-strength.js';

export { MIN_TOKEN_BITS, MIN_TOKEN_LENGTH, tokenWeakness } from '../plugins/schemas/token-strength.js';

/** A fresh token: 24 random bytes, base64url (32 characters). */
export function generateToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Path of the generated token in `stateDir`. */
export const tokenPath = (stateDir: string): string => join(stateDir, TOKEN_FILE);

/**
 * The token kept in `stateDir` (made 0600 if it was not), or a new one written there 0600 when the
 * file is missing, empty or too weak. The same token survives restarts, so a bookmarked address stays
 * valid until the file is deleted.
 */
export function loadOrCreateToken(stateDir: string): { token: string; path: string; created: boolean } {
  const path = tokenPath(stateDir);
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    if (existsSync(path)) {
      if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
      const kept = readFileSync(path, 'utf8').trim();
      if (kept && tokenWeakness(kept) === undefined) return { token: kept, path, created: false };
    }
    const token = generateToken();
    // A temporary file created 0600, then renamed: the token is never readable by others, not even briefly.
    const tmp = `${path}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeFileSync(fd, `${token}\n`);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    return { token, path, created: true };
  } catch (err) {
    throw new CortexError('websim_token_file', `cannot keep the WebSim token in ${path}: ${(err as Error).message}`, { cause: err });
  }
}
