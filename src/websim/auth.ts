// WebSim request checks: the token (header, query or session cookie, compared in constant time, attempts limited per peer), Host and Origin.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { backoffDelay } from '../backoff.js';
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
export type AuthResult = { ok: true; via: 'open' | 'header' | 'query' | 'cookie' } | { ok: false; reason: string; presented: boolean };

/** Whether a request carries a token (or session cookie) at all: only those count as guesses. */
export function presentsToken(headers: IncomingHttpHeaders, url: URL): boolean {
  return (
    headers.authorization !== undefined ||
    headers[TOKEN_HEADER] !== undefined ||
    url.searchParams.has('token') ||
    cookieOf(headers, SESSION_COOKIE) !== undefined
  );
}

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
  return { ok: false, reason: 'a valid WebSim token is required (Authorization: Bearer, X-WebSim-Token, or ?token=)', presented: presentsToken(headers, url) };
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
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return { ok: false, reason: 'malformed Origin' };
  }
  // Scheme and host:port both: the page is served over plain http, so an https:// or any other
  // origin naming the same host is another origin.
  if (parsed.protocol !== 'http:' || parsed.host !== host.toLowerCase()) return { ok: false, reason: 'cross-origin request refused' };
  return { ok: true };
}

/** Token guesses one peer may make in a window before it is locked out. */
export const ATTEMPTS_PER_WINDOW = 10;
export const ATTEMPT_WINDOW_MS = 1_000;
/** Lockouts grow from 1 s, doubling, to 5 minutes; a correct token resets them. */
const LOCKOUT = { initialMs: 1_000, maxMs: 300_000, factor: 2, jitter: 0 };
/** Peers remembered at once; the oldest are forgotten past this (a bound on the limiter itself). */
const MAX_PEERS = 4096;

interface PeerAttempts {
  windowStart: number;
  failures: number;
  lockouts: number;
  lockedUntil: number;
}

/**
 * Limits token guesses per peer address: ATTEMPTS_PER_WINDOW wrong tokens within ATTEMPT_WINDOW_MS
 * lock the peer out, for 1 s, then 2, 4... up to 5 minutes (src/backoff.ts), during which every token
 * it presents is refused without being compared. Only wrong tokens count; a right one resets the peer.
 */
export class AttemptLimiter {
  private readonly peers = new Map<string, PeerAttempts>();
  constructor(private readonly now: () => number = Date.now) {}

  /** Milliseconds `peer` must still wait, or 0 when it may try. */
  lockedFor(peer: string): number {
    const p = this.peers.get(peer);
    return p ? Math.max(0, p.lockedUntil - this.now()) : 0;
  }

  /**
   * Checks a presented token with `compare` unless the peer is locked out; records the outcome.
   * Returns `ok`, `wrong`, or `locked` with the wait in ms.
   */
  attempt(peer: string, compare: () => boolean): { result: 'ok' } | { result: 'wrong' } | { result: 'locked'; waitMs: number } {
    const wait = this.lockedFor(peer);
    if (wait > 0) return { result: 'locked', waitMs: wait };
    if (compare()) {
      this.peers.delete(peer);
      return { result: 'ok' };
    }
    const now = this.now();
    let p = this.peers.get(peer);
    if (!p) {
      if (this.peers.size >= MAX_PEERS) this.peers.delete(this.peers.keys().next().value!);
      p = { windowStart: now, failures: 0, lockouts: 0, lockedUntil: 0 };
      this.peers.set(peer, p);
    }
    if (now - p.windowStart >= ATTEMPT_WINDOW_MS) {
      p.windowStart = now;
      p.failures = 0;
    }
    p.failures += 1;
    if (p.failures >= ATTEMPTS_PER_WINDOW) {
      p.lockouts += 1;
      p.lockedUntil = now + backoffDelay(p.lockouts, LOCKOUT);
      p.failures = 0;
      p.windowStart = now;
    }
    return { result: 'wrong' };
  }
}

/** The Set-Cookie header value that opens a session for `token` (HttpOnly, SameSite=Strict, no expiry). */
export function sessionCookie(token: string): string {
  return `${SESSION_COOKIE}=${sessionValue(token)}; Path=/; HttpOnly; SameSite=Strict`;
}
