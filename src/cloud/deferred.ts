// A service client handed out before its service is up: each call asks for the start (first use), waits for the real client, then goes to it.
import type { ResolvedAddresses } from './addresses.js';
import type { CloudClient } from './client.js';

/**
 * What `cortexd run` gives its agent while the embedded service is still to start (it starts after
 * the first tick, or at the first call, whichever comes first, to stay out of the first tick's
 * way). Every call is made in the order it was asked, once the service is up; a call whose signal
 * aborts while it waits rejects with the signal's reason; when the service fails, every waiting and
 * later call rejects with that failure. `addresses` is undefined until the service is up.
 */
export interface DeferredCloud {
  readonly cloud: CloudClient;
  /** The service is up: waiting calls go to `client`. */
  resolve(client: CloudClient): void;
  /** The service did not start (or was stopped first): waiting and later calls reject with `error`. */
  reject(error: Error): void;
}

/** `onUse` runs at every call (the owner starts the service at the first one; later ones are no-ops for it). */
export function deferredCloud(onUse: () => void): DeferredCloud {
  let real: CloudClient | undefined;
  let settle: { resolve(c: CloudClient): void; reject(e: Error): void } | undefined;
  const ready = new Promise<CloudClient>((resolve, reject) => (settle = { resolve, reject }));
  // A failure nobody waits for yet is not an unhandled rejection: the owner reports it.
  ready.catch(() => undefined);

  /**
   * The real client, once up; the caller's abort ends the wait (the service keeps starting for the
   * others). Every call takes the same path, also after the service is up, so calls reach the real
   * client in the order they were made.
   */
  const client = (signal: AbortSignal | undefined): Promise<CloudClient> => {
    if (!real) onUse();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<CloudClient>((resolve, reject) => {
      const abort = () => reject(signal?.reason);
      signal?.addEventListener('abort', abort, { once: true });
      ready.then(resolve, reject).finally(() => signal?.removeEventListener('abort', abort));
    });
  };

  const cloud: CloudClient = {
    // Read by whoever serialises the agent's input (the --inspect inspector): never throws.
    get addresses(): ResolvedAddresses | undefined {
      return real?.addresses;
    },
    chat: {
      create: async (provider, request, options = {}) => (await client(options.signal)).chat.create(provider, request, options),
      events: async (provider, request, options) => (await client(options.signal)).chat.events(provider, request, options),
      stream: async (provider, request, options = {}) => (await client(options.signal)).chat.stream(provider, request, options),
    },
    tts: {
      speechlab: async (request, options = {}) => (await client(options.signal)).tts.speechlab(request, options),
      speechlabStream: async (request, options = {}) => (await client(options.signal)).tts.speechlabStream(request, options),
      speechb: async (request, options = {}) => (await client(options.signal)).tts.speechb(request, options),
    },
    openSpeechlabAsr: async (options = {}) => (await client(options.signal)).openSpeechlabAsr(options),
    openSpeechbAsr: async (options = {}) => (await client(options.signal)).openSpeechbAsr(options),
    openVision: async (options = {}) => (await client(options.signal)).openVision(options),
  };
  return {
    cloud,
    resolve: (c) => {
      real ??= c;
      settle?.resolve(c);
    },
    reject: (e) => settle?.reject(e),
  };
}
