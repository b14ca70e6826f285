// WebSim's token: how strong one must be, and the generated one kept 0600 in the state directory when none is configured.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CortexError } from '../errors.js';

/** Shortest token accepted: a page reachable from a network must not be guarded by a guessable word. */
export const MIN_TOKEN_LENGTH = 16;
/** Least estimated strength of a token, in bits (a random 16-character base64url token has about 60 by this measure). */
export const MIN_TOKEN_BITS = 48;
/** The file in the state directory that holds the generated token. */
export const TOKEN_FILE = 'websim-token';

/**
 * Why `token` is too weak, or undefined when it is strong enough. The reason never contains the token:
 * it goes into `check` output and logs. Weak: shorter than MIN_TOKEN_LENGTH, fewer than 8 different
 * characters, an estimated strength (length × the per-character Shannon entropy of its own characters)
 * under MIN_TOKEN_BITS, or a run such as `abcdefghijklmnop` / `1234567890123456` (most steps equal).
 */
export function tokenWeakness(token: string): string | undefined {
  const chars = [...token];
  if (chars.length < MIN_TOKEN_LENGTH) return `a WebSim token needs at least ${MIN_TOKEN_LENGTH} characters (this one has ${chars.length})`;
  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  if (counts.size < 8)
    return `a WebSim token needs at least 8 different characters (this one has ${counts.size}): use a random one, e.g. openssl rand -base64 24`;
  let perChar = 0;
  for (const n of counts.values()) perChar -= (n / chars.length) * Math.log2(n / chars.length);
  const bits = perChar * chars.length;
  if (bits < MIN_TOKEN_BITS)
    return `a WebSim token is too predictable (about ${Math.floor(bits)} bits, at least ${MIN_TOKEN_BITS} needed): use a random one, e.g. openssl rand -base64 24`;
  let sameStep = 0;
  for (let i = 2; i < chars.length; i++) {
    const a = chars[i - 2]!.codePointAt(0)!;
    const b = chars[i - 1]!.codePointAt(0)!;
    const c = chars[i]!.codePointAt(0)!;
    if (c - b === b - a) sameStep += 1;
  }
  if (sameStep * 2 > chars.length - 2)
    return 'a WebSim token must not be a run of characters (like abcdefgh...): use a random one, e.g. openssl rand -base64 24';
  return undefined;
}

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
