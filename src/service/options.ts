// Options of the local service and their defaults: addresses, database, secret, limits, backends (from options or environment).
import { join } from 'node:path';
import type { Logger } from 'pino';
import { PROVIDERS, type Provider } from '../cloud/catalog.js';
import { stateDir } from '../paths.js';
import { KEY_OPS_RATE_LIMIT, type RateLimitOptions } from './ratelimit.js';

/** A chat backend of one provider: forward to a chat-completions upstream, or the offline rule-based model. */
export type ChatBackendConfig = { kind: 'upstream'; baseUrl: string; apiKey?: string } | { kind: 'rules' };

/** A speech-synthesis backend: espeak-ng offline, or another hosted-API-compatible service upstream. */
export type TtsBackendConfig = { kind: 'espeak' } | { kind: 'upstream'; baseUrl: string; apiKey?: string };

export interface BackendOptions {
  /** Per provider; a provider left out uses the environment, else the rule-based model. */
  chat?: Partial<Record<Provider, ChatBackendConfig>>;
  /** Per TTS vendor; default espeak-ng for both. */
  tts?: Partial<Record<'speechlab' | 'speechb', TtsBackendConfig>>;
  /**
   * Recognition: `grammar` is a list of command phrases compiled to a JSGF grammar (the default is
   * DEFAULT_COMMANDS in backends/commands.ts); `'open'` uses pocketsphinx's full English model.
   */
  asr?: { grammar?: readonly string[] | 'open' };
}

/**
 * Every bound of the service (decisions; the spec names none of them). Defaults in DEFAULT_LIMITS;
 * src/service/README.md, "Limits under load", lists them with the status each one answers.
 */
export interface ServiceLimits {
  /** Maximum HTTP request body in bytes (413 past it). Default 1 MiB. */
  bodyBytes: number;
  /** Maximum characters of one speech synthesis request. Default 5000. */
  ttsChars: number;
  /** Maximum size of one recognition socket message in bytes. Default 1 MiB. */
  asrMessageBytes: number;
  /** Maximum size of one vision socket message in bytes. Default 2 MiB. */
  vlmMessageBytes: number;
  /** Silence (no detected speech) after which a recognition socket closes. Default 60 s. */
  asrSilenceMs: number;
  /** Length of one internal recognition session before it restarts with `info`. Default 5 min. */
  asrSessionMs: number;
  /** Time for a client to send a request's headers; the connection is closed past it. Default 10 s. */
  headersTimeoutMs: number;
  /** Time for a client to send a whole body once its headers arrived: 408 past it. Default 30 s. */
  bodyTimeoutMs: number;
  /** A connection that moves no byte for this long is closed (keep-alive idle: 5 s). Default 120 s. */
  idleTimeoutMs: number;
  /** HTTP requests of one API key in progress at once; 429 past it. Default 8. */
  keyConcurrentRequests: number;
  /** Syntheses (espeak-ng + ffmpeg) running at once. Default 2. */
  ttsWorkers: number;
  /** Syntheses waiting for a worker over all keys; 503 past it. Default 8. */
  ttsQueue: number;
  /** Largest audio one synthesis may produce (bytes, on disk, never in memory); 500 past it. Default 128 MiB. */
  ttsAudioBytes: number;
  /** Synthesised audio on disk not yet delivered (slow clients), all requests together; 503 for new syntheses past it. Default 1 GiB. */
  ttsPendingBytes: number;
  /** Recognition sockets open at once per API key; the upgrade answers 429 past it. Default 4. */
  asrSessionsPerKey: number;
  /** Recognizer processes (pocketsphinx) running at once over all sessions. Default 2. */
  asrDecoders: number;
  /** Utterances waiting for a recognizer over all sessions; past it an utterance is refused with an error event. Default 16. */
  asrDecodeQueue: number;
  /** Vision sockets open at once per API key; 429 at the upgrade past it. Default 2. */
  vlmSessionsPerKey: number;
  /** Vision worker processes (decode and detection off the service's event loop). Default 1. */
  vlmWorkers: number;
  /** Frames waiting for a vision worker over all sessions; past it a frame gets a busy error. Default 4. */
  vlmQueue: number;
  /** Largest width or height of a frame, read from its JPEG/PNG header before decoding. Default 4096. */
  vlmMaxSide: number;
  /** Largest frame in pixels (width x height, from the header). Default 8,388,608 (3840x2160 fits). */
  vlmMaxPixels: number;
  /** One analysis taking longer than this ends its worker (restarted for the next frame). Default 20 s. */
  vlmJobTimeoutMs: number;
  /** Bytes queued to one socket client that does not read; past it the socket is closed 1008. Default 1 MiB. */
  wsSendQueueBytes: number;
  /** Output tokens reserved for a chat request that names no max_tokens. Default 4096. */
  chatReserveTokens: number;
  /** Deepest nesting of objects and arrays in a JSON body, checked before parsing (400 past it). Default 64. */
  jsonDepth: number;
  /** Objects and arrays in one JSON body, counted before parsing (413 past it). Default 10,000. */
  jsonContainers: number;
  /** Largest PNG frame in pixels (PNG has no reduced decoding; from IHDR). Default 2,073,600 (1920x1080 fits). */
  vlmMaxPngPixels: number;
  /** Most scans (SOS markers) of a JPEG frame: each is a pass over the image when decoding. Default 100. */
  vlmMaxJpegScans: number;
  /** Memory (RSS) a vision worker may use: past it during a frame the worker is killed; past half its headroom after a frame, it is replaced. Default 512 MiB. */
  vlmWorkerMemoryBytes: number;
  /** Frames waiting for analysis per API key (the latest of each session; older ones are dropped). Default 2. */
  vlmQueuePerKey: number;
  /** TCP connections open at once from one peer address (HTTP and sockets together); more are closed at accept. Default 256. */
  connectionsPerPeer: number;
  /** Time from a socket message's first byte to its last: past it the socket is closed 1008. Default 10 s. */
  wsMessageTimeoutMs: number;
  /** A socket on which the client sends nothing for this long is closed 1001. Default 120 s. */
  wsIdleTimeoutMs: number;
}

export const DEFAULT_LIMITS: ServiceLimits = {
  bodyBytes: 1024 * 1024,
  ttsChars: 5000,
  asrMessageBytes: 1024 * 1024,
  vlmMessageBytes: 2 * 1024 * 1024,
  asrSilenceMs: 60_000,
  asrSessionMs: 5 * 60_000,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 120_000,
  keyConcurrentRequests: 8,
  ttsWorkers: 2,
  ttsQueue: 8,
  ttsAudioBytes: 128 * 1024 * 1024,
  ttsPendingBytes: 1024 * 1024 * 1024,
  asrSessionsPerKey: 4,
  asrDecoders: 2,
  asrDecodeQueue: 16,
  vlmSessionsPerKey: 2,
  vlmWorkers: 1,
  vlmQueue: 4,
  vlmMaxSide: 4096,
  vlmMaxPixels: 8 * 1024 * 1024,
  vlmJobTimeoutMs: 20_000,
  wsSendQueueBytes: 1024 * 1024,
  chatReserveTokens: 4096,
  jsonDepth: 64,
  jsonContainers: 10_000,
  vlmMaxPngPixels: 1920 * 1080,
  vlmMaxJpegScans: 100,
  vlmWorkerMemoryBytes: 512 * 1024 * 1024,
  vlmQueuePerKey: 2,
  connectionsPerPeer: 256,
  wsMessageTimeoutMs: 10_000,
  wsIdleTimeoutMs: 120_000,
};

export interface ServiceOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Port; 0 picks a free one. Default 0. */
  port?: number;
  /** SQLite file; `:memory:` allowed. Default `<stateDir()>/cloud.sqlite`. */
  dbPath?: string;
  /** JWT signing secret; default generated once into `<stateDir()>/cloud-jwt.secret` (mode 0600). */
  jwtSecret?: string;
  logger?: Logger;
  backends?: BackendOptions;
  limits?: Partial<ServiceLimits>;
  /** Rate limit of key and account operations per user. */
  keyRateLimit?: RateLimitOptions;
  /** Clock for balances and key timestamps (tests). */
  now?: () => Date;
}

export function defaultDbPath(): string {
  return join(stateDir(), 'cloud.sqlite');
}
export function defaultSecretPath(): string {
  return join(stateDir(), 'cloud-jwt.secret');
}

/**
 * The chat backend of `provider`: the explicit option, else environment
 * `CORTEX_CLOUD_<PROVIDER>_BASE_URL` (+ `CORTEX_CLOUD_<PROVIDER>_API_KEY`), e.g.
 * CORTEX_CLOUD_PROVIDER_A_BASE_URL=https://api.example.com/v1, else the rule-based model.
 */
export function chatBackendFor(provider: Provider, opts: BackendOptions | undefined, env: NodeJS.ProcessEnv = process.env): ChatBackendConfig {
  const explicit = opts?.chat?.[provider];
  if (explicit) return explicit;
  const up = provider.toUpperCase();
  const baseUrl = env[`CORTEX_CLOUD_${up}_BASE_URL`];
  if (baseUrl) return { kind: 'upstream', baseUrl, apiKey: env[`CORTEX_CLOUD_${up}_API_KEY`] || undefined };
  return { kind: 'rules' };
}

/** Same for speech synthesis: CORTEX_CLOUD_SPEECHLAB_BASE_URL / _API_KEY, CORTEX_CLOUD_SPEECHB_...; default espeak-ng. */
export function ttsBackendFor(vendor: 'speechlab' | 'speechb', opts: BackendOptions | undefined, env: NodeJS.ProcessEnv = process.env): TtsBackendConfig {
  const explicit = opts?.tts?.[vendor];
  if (explicit) return explicit;
  const up = vendor.toUpperCase();
  const baseUrl = env[`CORTEX_CLOUD_${up}_BASE_URL`];
  if (baseUrl) return { kind: 'upstream', baseUrl, apiKey: env[`CORTEX_CLOUD_${up}_API_KEY`] || undefined };
  return { kind: 'espeak' };
}

export { PROVIDERS, KEY_OPS_RATE_LIMIT };
