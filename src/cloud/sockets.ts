// The three sockets of the hosted API: speechlab ASR, the second (speechb) ASR socket and the vision socket, typed send and receive.
import { ASR_DEFAULT_RATE, ASR_RATES, type AsrRate } from './catalog.js';
import { CloudValidationError } from './errors.js';
import {
  AsrServerMessageSchema,
  PATHS,
  SpeechbAsrServerMessageSchema,
  VlmServerMessageSchema,
  type AsrClientMessage,
  type AsrServerMessage,
  type SpeechbAsrClientMessage,
  type SpeechbAsrServerMessage,
  type VlmClientMessage,
  type VlmServerMessage,
} from './protocol.js';
import { openSocket, type CloudSocket } from './socket.js';

interface CommonOpen {
  apiKey: string;
  signal?: AbortSignal;
  connectTimeoutMs?: number;
}

/**
 * An ASR session: `sendAudio` sends base64 PCM (s16le mono); the first call adds `rate` and
 * `language_code`, later calls send `audio` only (the spec's message rule).
 */
export class AsrSession<In> {
  private first = true;
  constructor(
    readonly socket: CloudSocket<AsrClientMessage | SpeechbAsrClientMessage, In>,
    private readonly rate: number,
    private readonly languageCode: string,
  ) {}

  /** Sends one chunk of raw PCM (Buffer) or already-base64 text. False when the socket is not open. */
  sendAudio(pcm: Buffer | string): boolean {
    const audio = typeof pcm === 'string' ? pcm : pcm.toString('base64');
    const msg = this.first ? { audio, rate: this.rate, language_code: this.languageCode } : { audio };
    const sent = this.socket.send(msg as AsrClientMessage);
    if (sent) this.first = false;
    return sent;
  }

  /**
   * Tells the server the utterance ended (`end_of_utterance`, an extension of the local service: send
   * it only to a server that announced it). False when the socket is not open.
   */
  endUtterance(): boolean {
    const msg = this.first ? { audio: '', rate: this.rate, language_code: this.languageCode, end_of_utterance: true } : { audio: '', end_of_utterance: true };
    const sent = this.socket.send(msg as AsrClientMessage);
    if (sent) this.first = false;
    return sent;
  }

  close(code?: number, reason?: string): void {
    this.socket.close(code, reason);
  }
}

export interface SpeechlabAsrOptions extends CommonOpen {
  /** {ws_base_url}, e.g. `wss://host`. */
  wsBaseUrl: string;
  /** One of 8000, 16000, 22050, 44100; default 16000. */
  rate?: AsrRate;
  /** BCP-47 code or `auto` (default). */
  languageCode?: string;
  /** Use the `/api/core/v1/` path prefix. */
  v1?: boolean;
}

/** Checks the first-message fields before connecting. */
function checkAsrStart(endpoint: string, rate: number, languageCode: string, rates?: readonly number[]): void {
  const issues: string[] = [];
  if (rates && !rates.includes(rate)) issues.push(`rate: ${rate} is not one of ${rates.join(', ')}`);
  if (!rates && (!Number.isInteger(rate) || rate <= 0)) issues.push(`rate: ${rate} is not a positive integer`);
  if (!languageCode.trim()) issues.push('language_code: empty');
  if (issues.length) throw new CloudValidationError(endpoint, issues);
}

/** Opens {ws_base_url}/api/core/speechlab/asr (or /api/core/v1/speechlab/asr) with `?api_key=`. */
export async function openSpeechlabAsr(options: SpeechlabAsrOptions): Promise<AsrSession<AsrServerMessage>> {
  const path = options.v1 ? PATHS.speechlabAsrV1 : PATHS.speechlabAsr;
  const rate = options.rate ?? ASR_DEFAULT_RATE;
  const language = options.languageCode ?? 'auto';
  checkAsrStart(`WS ${path}`, rate, language, ASR_RATES);
  const socket = await openSocket<AsrClientMessage, typeof AsrServerMessageSchema>({
    url: options.wsBaseUrl.replace(/\/+$/, '') + path,
    apiKey: options.apiKey,
    inbound: AsrServerMessageSchema,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
  });
  return new AsrSession<AsrServerMessage>(socket as CloudSocket<AsrClientMessage | SpeechbAsrClientMessage, AsrServerMessage>, rate, language);
}

export interface SpeechbAsrOptions extends CommonOpen {
  /** {asr_ws_url}, the full socket address. */
  asrWsUrl: string;
  /** Default 16000; the spec does not list this socket's rates, so any positive integer is sent. */
  rate?: number;
  /** Region form such as `en-US`; default `en-US`. */
  languageCode?: string;
}

/** Opens {asr_ws_url}?api_key=; replies are `{asr_reply}` or `{error}`. */
export async function openSpeechbAsr(options: SpeechbAsrOptions): Promise<AsrSession<SpeechbAsrServerMessage>> {
  const rate = options.rate ?? ASR_DEFAULT_RATE;
  const language = options.languageCode ?? 'en-US';
  checkAsrStart('WS {asr_ws_url}', rate, language);
  const socket = await openSocket<SpeechbAsrClientMessage, typeof SpeechbAsrServerMessageSchema>({
    url: options.asrWsUrl,
    apiKey: options.apiKey,
    inbound: SpeechbAsrServerMessageSchema,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
  });
  return new AsrSession<SpeechbAsrServerMessage>(socket as CloudSocket<AsrClientMessage | SpeechbAsrClientMessage, SpeechbAsrServerMessage>, rate, language);
}

/** A vision session: frames out, `{vlm_reply}` (or `{error}`) in. */
export class VisionSession {
  constructor(readonly socket: CloudSocket<VlmClientMessage, VlmServerMessage>) {}

  /** Sends one JPEG (Buffer or base64) with its capture time in Unix seconds (default now). */
  sendFrame(jpeg: Buffer | string, timestampSeconds: number = Date.now() / 1000): boolean {
    const frame = typeof jpeg === 'string' ? jpeg : jpeg.toString('base64');
    return this.socket.send({ timestamp: timestampSeconds, frame });
  }

  close(code?: number, reason?: string): void {
    this.socket.close(code, reason);
  }
}

export interface VisionOptions extends CommonOpen {
  /** {vlm_ws_url}, the full socket address. */
  vlmWsUrl: string;
}

/** Opens {vlm_ws_url}?api_key=. */
export async function openVision(options: VisionOptions): Promise<VisionSession> {
  const socket = await openSocket<VlmClientMessage, typeof VlmServerMessageSchema>({
    url: options.vlmWsUrl,
    apiKey: options.apiKey,
    inbound: VlmServerMessageSchema,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
  });
  return new VisionSession(socket);
}
