// The operator's fleet identity: Ed25519 signatures, by the operator's key, over a command and its robot, checked against the robot's list
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { CortexError } from '../errors.js';

/*
 * A broker's credentials say who may publish, not who sent a given command, and a broker that
 * accepts anonymous clients says nothing at all. An operator who holds a private key signs each
 * command; a robot whose own file lists the matching public key (`fleet.operator_keys`) knows the
 * command came from that operator and was meant for that robot (the robot id is signed too, so a
 * command for one robot cannot be replayed to another; the id and expiry are signed, so the
 * replay guard and the expiry hold for signed commands as for others).
 *
 * Public keys are written `ed25519:<base64url of the 32 raw bytes>` (one line, fit for a config file);
 * private keys are PKCS#8 PEM files, mode 0600 (`cortexd fleet keygen`).
 */

export class OperatorKeyError extends CortexError {
  constructor(message: string) {
    super('operator_key', message);
    this.name = 'OperatorKeyError';
  }
}

const PREFIX = 'ed25519:';

/** Parses `ed25519:<base64url>`; throws OperatorKeyError naming what is wrong. */
export function parsePublicKey(text: string): KeyObject {
  const t = text.trim();
  if (!t.startsWith(PREFIX)) throw new OperatorKeyError(`an operator key is "ed25519:" followed by 43 base64url characters (cortexd fleet keygen prints one)`);
  const x = t.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]{43}$/.test(x)) throw new OperatorKeyError('an operator key is "ed25519:" followed by 43 base64url characters (32 bytes)');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}

/** The one-line form of a public key. */
export function formatPublicKey(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' }) as { x?: string };
  return `${PREFIX}${jwk.x}`;
}

/** A short name of a key for logs and replies: its first 12 characters after the prefix. */
export function keyId(key: KeyObject): string {
  return formatPublicKey(key).slice(PREFIX.length, PREFIX.length + 12);
}

/** Reads an operator's private key (PKCS#8 PEM, Ed25519). */
export function parsePrivateKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new OperatorKeyError('not a private key in PEM form (cortexd fleet keygen writes one)');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new OperatorKeyError(`an operator key is Ed25519, this one is ${key.asymmetricKeyType ?? 'unknown'}`);
  return key;
}

export function generateOperatorKey(): { privatePem: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), publicKey: formatPublicKey(publicKey) };
}

/** JSON with object keys sorted at every level: the bytes both ends sign and check. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** What is signed: the robot the command is for and the command without its signature. */
function signedBytes(robot: string, command: Record<string, unknown>): Buffer {
  const { sig: _sig, ...rest } = command;
  return Buffer.from(`cortexd-fleet-command\n${robot}\n${canonical(rest)}`);
}

/** The command with `sig` (base64url) added. */
export function signCommand<C extends Record<string, unknown>>(command: C, robot: string, key: KeyObject): C & { sig: string } {
  return { ...command, sig: sign(null, signedBytes(robot, command), key).toString('base64url') };
}

export type Verdict = { signed: false } | { signed: true; ok: true; key: string } | { signed: true; ok: false; reason: string };

/** Checks a command's signature (when it has one) against `keys`. */
export function verifyCommand(command: Record<string, unknown>, robot: string, keys: readonly KeyObject[]): Verdict {
  const sig = command.sig;
  if (sig === undefined) return { signed: false };
  if (typeof sig !== 'string' || !/^[A-Za-z0-9_-]{86}$/.test(sig)) return { signed: true, ok: false, reason: 'the signature is not an Ed25519 signature' };
  if (keys.length === 0) return { signed: true, ok: false, reason: 'signed, but this robot lists no operator key (fleet.operator_keys in its own file)' };
  const bytes = signedBytes(robot, command);
  const signature = Buffer.from(sig, 'base64url');
  for (const key of keys) if (verify(null, bytes, key, signature)) return { signed: true, ok: true, key: keyId(key) };
  return { signed: true, ok: false, reason: "the signature matches none of this robot's operator keys" };
}
