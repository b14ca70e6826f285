// Who is at the other end of a TCP connection: a remote address, or, from this machine, the local user that owns the client socket.
import { readFileSync } from 'node:fs';
import { networkInterfaces, endianness } from 'node:os';
import type { Socket } from 'node:net';

/**
 * Every local user reaches a loopback server from 127.0.0.1, so a limit keyed on the address is one
 * budget for all of them: one user who fills it locks out every other, the operator and the robot's
 * own clients included. On Linux the kernel lists each TCP socket with the user that owns it
 * (`/proc/net/tcp`, `/proc/net/tcp6`); the client's end of a connection made on this machine is
 * there, so its owner is known without trusting anything the client says, and another user cannot
 * take it on. Limits key on that user (`uid:1000`); a connection from another machine keys on its
 * address as before; a local connection whose owner cannot be read (not Linux, the client already
 * gone) keys on `local`, one bucket for all of 127/8, ::1 and this machine's own addresses, so
 * rotating the source address within them gains nothing.
 */
export type PeerKey = string;

const LITTLE = endianness() === 'LE';
/** Where a socket keeps its key once looked up. */
const KEY = Symbol('cortexd.peerKey');

/** `::ffff:127.0.0.1` is 127.0.0.1. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** Whether `address` is a loopback address (127/8, ::1, a v4-mapped 127/8). */
export function isLoopbackAddress(address: string): boolean {
  const a = plainAddress(address);
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
}

let ownAddresses: { at: number; set: Set<string> } | undefined;
/** This machine's own addresses (re-read at most every 10 s: interfaces come and go). */
function isOwnAddress(address: string): boolean {
  const now = Date.now();
  if (!ownAddresses || now - ownAddresses.at > 10_000) {
    const set = new Set<string>();
    for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) set.add(i.address);
    ownAddresses = { at: now, set };
  }
  return ownAddresses.set.has(address);
}

/** The kernel's hex spelling of an address in /proc/net/tcp{,6}: 32-bit words in host byte order. */
function hexAddress(address: string): string | undefined {
  const a = plainAddress(address);
  if (a.includes('.')) {
    const parts = a.split('.').map(Number);
    if (parts.length !== 4 || parts.some((p) => !(p >= 0 && p <= 255))) return undefined;
    const bytes = LITTLE ? parts.reverse() : parts;
    return bytes
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('')
      .toUpperCase();
  }
  const words = expandIpv6(a);
  if (!words) return undefined;
  let out = '';
  for (let w = 0; w < 8; w += 2) {
    const bytes = [words[w]! >> 8, words[w]! & 0xff, words[w + 1]! >> 8, words[w + 1]! & 0xff];
    out += (LITTLE ? bytes.reverse() : bytes).map((b) => b.toString(16).padStart(2, '0')).join('');
  }
  return out.toUpperCase();
}

/** The eight 16-bit groups of an IPv6 address (no zone), or undefined. */
function expandIpv6(a: string): number[] | undefined {
  const addr = a.split('%')[0]!;
  const [head, tail] = addr.includes('::') ? addr.split('::') : [addr, undefined];
  const h = head ? head.split(':') : [];
  const tl = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const missing = 8 - h.length - tl.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  const groups = [...h, ...Array(missing).fill('0'), ...tl].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

const hexPort = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');

/**
 * Reading the kernel's table costs time in proportion to every TCP socket on the machine (a few ms,
 * 40 ms with 2,000 sockets on a loaded machine), so it is read at most every TABLE_MIN_INTERVAL_MS: a
 * connection made since the last read waits for the next (whenPeerKnown). A flood of new connections
 * therefore costs at most ten reads a second, and still every connection counts for its own user.
 */
export const TABLE_MIN_INTERVAL_MS = 100;
/** One read of a table: uid by `local rem` pair (as the kernel spells them), TIME_WAIT lines left out (their uid is 0). */
type Table = Map<string, number>;
const tables = new Map<string, { rows: Table; at: number }>();
function table(path: string, fresh: boolean): Table | undefined {
  const kept = tables.get(path);
  const now = Date.now();
  if (kept && (!fresh || now - kept.at < TABLE_MIN_INTERVAL_MS)) return fresh ? undefined : kept.rows;
  const rows: Table = new Map();
  for (const line of readFileSync(path, 'latin1').split('\n')) {
    // sl local rem st tx:rx tr:when retrnsmt uid
    const f = line.trim().split(/\s+/);
    if (f.length < 8 || f[3] === '06') continue;
    const uid = Number(f[7]);
    if (Number.isInteger(uid)) rows.set(`${f[1]} ${f[2]}`, uid);
  }
  tables.set(path, { rows, at: now });
  return rows;
}

/**
 * The local user that owns the client end of `socket` (a connection accepted by a server of this
 * process); undefined when it is not a connection from this machine or cannot be read; `later` when
 * it is not in the last read of the table and the next read may not happen yet.
 */
export function localPeerUid(socket: Socket, force = false): number | undefined | 'later' {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  if (!remoteAddress || !remotePort || !localAddress || !localPort || process.platform !== 'linux') return undefined;
  const remote = hexAddress(remoteAddress);
  const local = hexAddress(localAddress);
  if (!remote || !local) return undefined;
  const v4 = plainAddress(remoteAddress).includes('.');
  const needle = `${remote}:${hexPort(remotePort)} ${local}:${hexPort(localPort)}`;
  const path = v4 ? '/proc/net/tcp' : '/proc/net/tcp6';
  try {
    if (force) tables.delete(path);
    const found = table(path, false)?.get(needle);
    if (found !== undefined) return found;
    const fresh = table(path, true);
    return fresh === undefined ? 'later' : fresh.get(needle);
  } catch {
    return undefined;
  }
}

/**
 * What limits and lockouts key on for `socket`: `uid:N` for a connection from this machine whose
 * owner the kernel names, `local` for one from this machine whose owner it cannot name, else the
 * remote address; undefined while it waits for the next read. Kept on the socket once known.
 */
function keyOf(socket: Socket, force: boolean): PeerKey | undefined {
  const s = socket as Socket & { [KEY]?: PeerKey };
  const kept = s[KEY];
  if (kept !== undefined) return kept;
  const address = plainAddress(socket.remoteAddress ?? 'unknown');
  let key: PeerKey = address;
  if (isLoopbackAddress(address) || isOwnAddress(address)) {
    const uid = localPeerUid(socket, force);
    if (uid === 'later') return undefined;
    key = uid === undefined ? 'local' : `uid:${uid}`;
  }
  s[KEY] = key;
  return key;
}

/** Connections waiting for the next read of the table, at most this many (more are `local` at once): each holds a descriptor meanwhile, so the bound is small. */
const MAX_WAITING = 256;
const waiting: Array<{ socket: Socket; then: (key: PeerKey) => void }> = [];
let timer: NodeJS.Timeout | undefined;

/**
 * Calls `then` with the key of `socket`: at once when known, else after the next read of the table
 * (within TABLE_MIN_INTERVAL_MS), so a connection that arrives in a burst is still counted for its
 * own user. A closed connection is not called back.
 */
export function whenPeerKnown(socket: Socket, then: (key: PeerKey) => void): void {
  const key = keyOf(socket, false);
  if (key !== undefined) return then(key);
  if (waiting.length >= MAX_WAITING) return then('local');
  waiting.push({ socket, then });
  timer ??= setTimeout(() => {
    timer = undefined;
    const batch = waiting.splice(0);
    let first = true;
    for (const w of batch) {
      if (w.socket.destroyed) continue;
      w.then(keyOf(w.socket, first) ?? 'local');
      first = false;
    }
  }, TABLE_MIN_INTERVAL_MS);
  timer.unref();
}

/** The key of `socket` once known (within TABLE_MIN_INTERVAL_MS): what a request's checks wait for. */
export function peerKeyOf(socket: Socket): Promise<PeerKey> {
  return new Promise((resolve) => {
    whenPeerKnown(socket, resolve);
    socket.once('close', () => resolve('local'));
  });
}

/** How a peer key reads in a message: `local user 1000`, `this machine`, or the address. */
export function describePeer(key: PeerKey): string {
  if (key.startsWith('uid:')) return `local user ${key.slice(4)}`;
  if (key === 'local') return 'this machine';
  return key;
}
