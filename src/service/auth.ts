// Credentials of the local service: the JWT signing secret, issuing and verifying JWTs (jose, HS256), and reading API keys from requests.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensurePrivateDir, narrowMode, PRIVATE_FILE_MODE } from './files.js';

/** Issuer and audience of the local identity provider's tokens. */
export const JWT_ISSUER = 'cortexd-cloud';
export const JWT_AUDIENCE = 'cortexd-cloud-account';
/** Default lifetime of a token from `cortexd cloud token`: 30 days. */
export const JWT_DEFAULT_TTL_S = 30 * 24 * 3600;

/**
 * Reads the JWT secret from `path`, creating it (32 random bytes, hex, file mode 0600, in a 0700
 * directory) on first use; an existing file left wider is narrowed to 0600. The file is the stand-in
 * for the identity provider's signing key.
 */
export function loadOrCreateSecret(path: string): string {
  ensurePrivateDir(dirname(path));
  if (existsSync(path)) {
    narrowMode(path, PRIVATE_FILE_MODE);
    const s = readFileSync(path, 'utf8').trim();
    if (s.length >= 32) return s;
  }
  const secret = randomBytes(32).toString('hex');
  writeFileSync(path, secret + '\n', { mode: PRIVATE_FILE_MODE });
  chmodSync(path, PRIVATE_FILE_MODE);
  return secret;
}

/** jose (46 modules) is loaded by the first token issued or checked, not when the service starts, so it stays out of the agent's first tick. */
const jose = () => import('jose');

export class JwtAuthority {
  private readonly key: Uint8Array;
  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  /** A token whose subject is the user's id; `name` is informational. */
  async issue(user: { id: string; name: string }, ttlSeconds = JWT_DEFAULT_TTL_S): Promise<string> {
    const { SignJWT } = await jose();
    return new SignJWT({ name: user.name })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.key);
  }

  /** The user id of a valid token, or undefined (bad signature, expired, wrong issuer, not a JWT). */
  async verify(token: string): Promise<string | undefined> {
    const { jwtVerify } = await jose();
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
      });
      return typeof payload.sub === 'string' ? payload.sub : undefined;
    } catch {
      return undefined;
    }
  }
}

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The bearer token of an `Authorization` header, if any. */
export function bearer(headers: Headers): string | undefined {
  const auth = header(headers, 'authorization');
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m?.[1];
}

/** An API key from `Authorization: Bearer` or else `x-api-key` (HTTP surfaces). */
export function apiKeyFromHeaders(headers: Headers): string | undefined {
  return bearer(headers) ?? header(headers, 'x-api-key')?.trim() ?? undefined;
}
