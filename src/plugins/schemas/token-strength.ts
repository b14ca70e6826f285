// How strong a WebSim token must be: a pure rule, shared by the config schema (`check`) and the server.

/** Shortest token accepted: a page reachable from a network must not be guarded by a guessable word. */
export const MIN_TOKEN_LENGTH = 16;
/** Least estimated strength of a token, in bits (a random 16-character base64url token has about 60 by this measure). */
export const MIN_TOKEN_BITS = 48;
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
