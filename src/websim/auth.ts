// WebSim request checks: the token (header, query or session cookie, compared in constant time), Host and Origin.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isLoopbackHost } from './options.js';

/** Cookie set after a request carried the token, so the page's module, graph and socket need no token in JS. */
export const SESSION_COOKIE = 'cortexd_websim';

/** Header a script or curl may use instead of `Authorization: Bearer`. */
export const TOKEN_HEADER = 'x-websim-token';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Constant-time equality of two secrets of any length (both are hashed to 32 bytes first). */
export function secretEquals(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/**
 * The cookie value for `token`: an HMAC of it, so the browser's cookie jar never holds the token
 * itself, and a changed token invalidates every session.
 */
export function sessionValue(token: string): string {
  return createHmac('sha256', token).update('cortexd-websim-session').digest('base64url');
}

function cookieOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const raw = headers.cookie;
  if (!raw) return undefined;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** How a request proved it knows the token; `none` when it did not. */
export type AuthResult = { ok: true; via: 'open' | 'header' | 'query' | 'cookie' } | { ok: false; reason: string };

/**
 * Checks a request against `token`. With no token configured every request passes (loopback only:
 * options refuse a non-loopback bind without one). Any one of these is enough: `Authorization:
 * Bearer T`, `X-WebSim-Token: T`, `?token=T`, or the session cookie.
 */
export function checkToken(headers: IncomingHttpHeaders, url: URL, token: string | undefined): AuthResult {
  if (token === undefined) return { ok: true, via: 'open' };
  const auth = headers.authorization;
  if (typeof auth === 'string' && /^Bearer\s+/i.test(auth) && secretEquals(auth.replace(/^Bearer\s+/i, '').trim(), token)) return { ok: true, via: 'header' };
  const header = headers[TOKEN_HEADER];
  if (typeof header === 'string' && secretEquals(header, token)) return { ok: true, via: 'header' };
  const query = url.searchParams.get('token');
  if (query !== null && secretEquals(query, token)) return { ok: true, via: 'query' };
  const cookie = cookieOf(headers, SESSION_COOKIE);
  if (cookie !== undefined && secretEquals(cookie, sessionValue(token))) return { ok: true, via: 'cookie' };
  return { ok: false, reason: 'a valid WebSim token is required (Authorization: Bearer, X-WebSim-Token, or ?token=)' };
}

/** The host name of a Host header (`127.0.0.1:8000` -> `127.0.0.1`, `[::1]:80` -> `::1`). */
export function hostName(hostHeader: string): string {
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(hostHeader);
  if (m) return m[1]!;
  const colon = hostHeader.lastIndexOf(':');
  return colon > 0 && hostHeader.indexOf(':') === colon ? hostHeader.slice(0, colon) : hostHeader;
}

/**
 * Browser-origin checks that hold whether or not a token is set:
 * - on a loopback bind, the Host header must name a loopback address, so a web page that rebinds
 *   its own DNS name to 127.0.0.1 cannot read or drive the agent;
 * - a request or socket that carries an Origin must come from this page's own origin, so another
 *   site open in the same browser cannot open the socket (cross-site WebSocket hijacking) or post.
 * Requests without Origin (curl, scripts) pass these checks; the token still applies to them.
 */
export function checkOrigin(headers: IncomingHttpHeaders, loopbackBind: boolean): { ok: true } | { ok: false; reason: string } {
  const host = headers.host;
  if (!host) return { ok: false, reason: 'missing Host header' };
  if (loopbackBind && !isLoopbackHost(hostName(host))) return { ok: false, reason: `Host ${JSON.stringify(host)} is not a loopback name` };
  const origin = headers.origin;
  if (origin === undefined) return { ok: true };
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return { ok: false, reason: 'malformed Origin' };
  }
  if (originHost !== host) return { ok: false, reason: 'cross-origin request refused' };
  return { ok: true };
}

/** The Set-Cookie header value that opens a session for `token` (HttpOnly, SameSite=Strict, no expiry). */
export function sessionCookie(token: string): string {
  return `${SESSION_COOKIE}=${sessionValue(token)}; Path=/; HttpOnly; SameSite=Strict`;
}
