// One entry point to the hosted API for the runtime: HTTP clients and socket openers bound to resolved addresses and an API key.
import { AccountClient } from './account.js';
import type { ResolvedAddresses } from './addresses.js';
import { ChatClient } from './chat.js';
import { CloudHttp } from './http.js';
import type { RetryOptions } from './retry.js';
import { openSpeechbAsr, openSpeechlabAsr, openVision, type SpeechbAsrOptions, type SpeechlabAsrOptions, type VisionOptions } from './sockets.js';
import { TtsClient } from './tts.js';

export interface CloudClientOptions {
  addresses: ResolvedAddresses;
  apiKey: string;
  /** speechlab vendor key override (`speechlab_api_key`). */
  speechlabApiKey?: string;
  /** Header for the speechlab TTS key; default Authorization Bearer. */
  ttsAuth?: 'bearer' | 'x-api-key';
  catalogCheck?: boolean;
  retry?: RetryOptions;
  fetch?: typeof fetch;
  onRetry?: RetryOptions['onRetry'];
}

type Without<T, K extends keyof T> = Omit<T, K>;

/** The runtime's client. Holds no connection: sockets belong to whoever opens them. */
export interface CloudClient {
  /** The addresses it dials; undefined for a client handed out before its service is up (src/cloud/deferred.ts), until then. */
  readonly addresses: ResolvedAddresses | undefined;
  /** The calls of a ChatClient and a TtsClient (src/cloud/deferred.ts gives the same calls before the service is up). */
  readonly chat: Pick<ChatClient, 'create' | 'events' | 'stream'>;
  readonly tts: Pick<TtsClient, 'speechlab' | 'speechlabStream' | 'speechb'>;
  openSpeechlabAsr(options?: Without<SpeechlabAsrOptions, 'wsBaseUrl' | 'apiKey'>): ReturnType<typeof openSpeechlabAsr>;
  openSpeechbAsr(options?: Without<SpeechbAsrOptions, 'asrWsUrl' | 'apiKey'>): ReturnType<typeof openSpeechbAsr>;
  openVision(options?: Without<VisionOptions, 'vlmWsUrl' | 'apiKey'>): ReturnType<typeof openVision>;
}

export function createCloudClient(options: CloudClientOptions): CloudClient {
  const { addresses, apiKey } = options;
  const http = new CloudHttp({
    baseUrl: addresses.base_url,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });
  return {
    addresses,
    chat: new ChatClient({ http, apiKey, ...(options.catalogCheck !== undefined ? { catalogCheck: options.catalogCheck } : {}) }),
    tts: new TtsClient({
      http,
      apiKey,
      ...(options.ttsAuth ? { auth: options.ttsAuth } : {}),
      ...(options.speechlabApiKey ? { speechlabApiKey: options.speechlabApiKey } : {}),
    }),
    openSpeechlabAsr: (o = {}) => openSpeechlabAsr({ ...o, wsBaseUrl: addresses.ws_base_url, apiKey }),
    openSpeechbAsr: (o = {}) => openSpeechbAsr({ ...o, asrWsUrl: addresses.asr_ws_url, apiKey }),
    openVision: (o = {}) => openVision({ ...o, vlmWsUrl: addresses.vlm_ws_url, apiKey }),
  };
}

/** Account client for `cortexd keys` / `cortexd balance`: a base URL and a JWT. */
export function createAccountClient(options: { baseUrl: string; jwt: string; retry?: RetryOptions; fetch?: typeof fetch }): AccountClient {
  const http = new CloudHttp({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
  });
  return new AccountClient({ http, jwt: options.jwt });
}
