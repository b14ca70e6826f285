// WebSim's configuration block: address, port, token (from the config or CORTEX_WEBSIM_TOKEN), and the loopback rule.
import { isIP } from 'node:net';
import { CortexError } from '../errors.js';
import { MIN_TOKEN_LENGTH, TOKEN_ENV, WebSimOptions } from '../plugins/schemas/websim.js';
import { tokenWeakness } from './token.js';

export { MIN_TOKEN_LENGTH, TOKEN_ENV, WebSimOptions };

/**
 * Options after the environment is read: `token` is undefined when neither config nor env gives one
 * (WebSim then generates one at start and keeps it in the state directory: see token.ts).
 */
export interface ResolvedWebSimOptions {
  host: string;
  port: number;
  token: string | undefined;
  loopback: boolean;
  /** The port is the default (no `port` in the block, no CORTEX_WEBSIM_PORT): a busy one moves to the next free port. */
  nextFree?: boolean;
}

/** Sets the port of every WebSim of the run (`cortexd run --websim-port N`); wins over the block's `port`. */
export const PORT_ENV = 'CORTEX_WEBSIM_PORT';

/** A WebSim that cannot start (unsafe bind, bad token, port taken, page missing). */
export class WebSimError extends CortexError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'WebSimError';
  }
}

/**
 * True for addresses only this machine can reach: the whole 127.0.0.0/8 block, ::1, IPv4-mapped
 * 127.x, and the name `localhost` (not its subdomains). Wildcards (0.0.0.0, ::) and every other name or address are not.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  // `localhost` itself only: `anything.localhost` is a name another page's author chooses.
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) {
    if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    return mapped !== null && mapped[1]!.startsWith('127.');
  }
  return false;
}

/**
 * Validates the block and applies the security rule: a non-loopback host without a token is refused
 * here, before anything listens. The env token is used only when the block has none; an env token
 * that is too short is refused rather than ignored, so a typo never leaves the page open.
 */
export function resolveWebSimOptions(config: unknown, env: Record<string, string | undefined> = process.env): ResolvedWebSimOptions {
  const parsed = WebSimOptions.safeParse(config ?? {});
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new WebSimError('websim_config', `WebSim config: ${first ? `${first.path.join('.') || '(block)'}: ${first.message}` : 'invalid'}`);
  }
  const options = parsed.data;
  let token = options.token;
  const fromEnv = env[TOKEN_ENV];
  if (token === undefined && fromEnv !== undefined && fromEnv !== '') {
    // The reason names the variable and the rule, never the token.
    const weak = tokenWeakness(fromEnv);
    if (weak) throw new WebSimError('websim_token', `${TOKEN_ENV}: ${weak}`);
    token = fromEnv;
  }
  const loopback = isLoopbackHost(options.host);
  if (!loopback && token === undefined) {
    throw new WebSimError(
      'websim_unsafe_bind',
      `WebSim refuses to bind ${options.host}: a non-loopback address needs a token (config.token or ${TOKEN_ENV}); use host 127.0.0.1 to keep it local`,
    );
  }
  const envPort = env[PORT_ENV];
  let port = options.port;
  if (envPort !== undefined && envPort !== '') {
    port = Number(envPort);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new WebSimError('websim_config', `${PORT_ENV}: not a port number: ${JSON.stringify(envPort)} (0-65535)`);
  }
  const given = (config as { port?: unknown } | undefined)?.port !== undefined || (envPort !== undefined && envPort !== '');
  return { host: options.host, port, token, loopback, ...(given ? {} : { nextFree: true }) };
}
