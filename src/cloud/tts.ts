// Speech synthesis client: speechlab JSON (base64 decoded), speechlab binary stream as a Node Readable, and speechb.
import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web';
import { TTS_DEFAULTS } from './catalog.js';
import { CloudProtocolError, CloudValidationError } from './errors.js';
import { CloudHttp, type Credential } from './http.js';
import { ttsCost } from './prices.js';
import {
  PATHS,
  SpeechbTtsRequestSchema,
  SpeechbTtsResponseSchema,
  SpeechlabTtsRequestSchema,
  SpeechlabTtsResponseSchema,
  type SpeechbTtsRequest,
  type SpeechlabTtsRequest,
} from './protocol.js';

export interface TtsCallOptions {
  signal?: AbortSignal;
}

export interface SpeechlabAudio {
  /** Decoded audio bytes. */
  audio: Buffer;
  /** Format the server says it returned, e.g. `mp3_44100_128`. */
  format: string;
  /** The input text as echoed by the server. */
  text: string;
  /** CU this request costs at the price table (characters as code points, rounded up per request). */
  costCu: number;
}

export interface SpeechlabStream {
  /** Audio bytes as they arrive; destroy it to stop (closes the connection). */
  audio: Readable;
  /** The response's Content-Type, e.g. `audio/mpeg`. */
  contentType: string;
  /** CU this request costs at the price table. */
  costCu: number;
}

export interface TtsClientOptions {
  http: CloudHttp;
  apiKey: string;
  /** Which header carries the API key on the speechlab endpoints (both are accepted by the spec). Default `bearer`. */
  auth?: 'bearer' | 'x-api-key';
  /** Vendor key override sent as `speechlab_api_key` on every speechlab request unless the request has one. */
  speechlabApiKey?: string;
}

/** Applies the spec's defaults (voice, model, format, speed) and checks ranges; throws CloudValidationError. */
export function speechlabBody(request: SpeechlabTtsRequest, endpoint: string, vendorKey?: string): SpeechlabTtsRequest {
  const body: SpeechlabTtsRequest = {
    voice: TTS_DEFAULTS.voice,
    model: TTS_DEFAULTS.model,
    response_format: TTS_DEFAULTS.response_format,
    speed: TTS_DEFAULTS.speed,
    ...request,
  };
  if (vendorKey && body.speechlab_api_key === undefined) body.speechlab_api_key = vendorKey;
  const parsed = SpeechlabTtsRequestSchema.safeParse(body);
  if (!parsed.success) {
    throw new CloudValidationError(
      endpoint,
      parsed.error.issues.map((i) => `${i.path.join('.') || '(request)'}: ${i.message}`),
    );
  }
  return parsed.data;
}

/** `/speechlab/tts`, `/speechlab/tts/audio/speech` and `/api/core/speechb/tts`. */
export class TtsClient {
  private readonly http: CloudHttp;
  private readonly credential: Credential;
  private readonly bearer: Credential;
  private readonly speechlabApiKey: string | undefined;

  constructor(options: TtsClientOptions) {
    this.http = options.http;
    this.bearer = { kind: 'bearer', token: options.apiKey };
    this.credential = options.auth === 'x-api-key' ? { kind: 'x-api-key', token: options.apiKey } : this.bearer;
    this.speechlabApiKey = options.speechlabApiKey;
  }

  /** Whole clip: POST /speechlab/tts, `response` base64-decoded. */
  async speechlab(request: SpeechlabTtsRequest, options: TtsCallOptions = {}): Promise<SpeechlabAudio> {
    const path = PATHS.speechlabTts;
    const endpoint = CloudHttp.endpoint({ method: 'POST', path });
    const body = speechlabBody(request, endpoint, this.speechlabApiKey);
    const req = { method: 'POST' as const, path, body, credential: this.credential };
    const res = await this.http.json(options.signal ? { ...req, signal: options.signal } : req, SpeechlabTtsResponseSchema);
    return { audio: decodeBase64(res.response, endpoint), format: res.format, text: res.text, costCu: ttsCost('speechlab', billedCharacters(body.input)) };
  }

  /**
   * Streaming clip: POST /speechlab/tts/audio/speech. Resolves when the headers arrive, so playback can
   * start on the first bytes. Nothing is retried after that; a broken body errors the Readable.
   */
  async speechlabStream(request: SpeechlabTtsRequest, options: TtsCallOptions = {}): Promise<SpeechlabStream> {
    const path = PATHS.speechlabTtsStream;
    const endpoint = CloudHttp.endpoint({ method: 'POST', path });
    const body = speechlabBody(request, endpoint, this.speechlabApiKey);
    const req = { method: 'POST' as const, path, body, credential: this.credential, accept: 'audio/*' };
    const res = await this.http.send(options.signal ? { ...req, signal: options.signal } : req);
    if (!res.body) throw new CloudProtocolError(endpoint, 'audio response without a body');
    const audio = Readable.fromWeb(res.body as unknown as NodeWebReadableStream<Uint8Array>);
    return { audio, contentType: res.headers.get('content-type') ?? 'application/octet-stream', costCu: ttsCost('speechlab', billedCharacters(body.input)) };
  }

  /** POST /api/core/speechb/tts (always `Authorization: Bearer`), `audio` base64-decoded. */
  async speechb(request: SpeechbTtsRequest, options: TtsCallOptions = {}): Promise<{ audio: Buffer; costCu: number }> {
    const path = PATHS.speechbTts;
    const endpoint = CloudHttp.endpoint({ method: 'POST', path });
    const parsed = SpeechbTtsRequestSchema.safeParse(request);
    if (!parsed.success) {
      throw new CloudValidationError(
        endpoint,
        parsed.error.issues.map((i) => `${i.path.join('.') || '(request)'}: ${i.message}`),
      );
    }
    const req = { method: 'POST' as const, path, body: parsed.data, credential: this.bearer };
    const res = await this.http.json(options.signal ? { ...req, signal: options.signal } : req, SpeechbTtsResponseSchema);
    return { audio: decodeBase64(res.audio, endpoint), costCu: ttsCost('speechb', billedCharacters(parsed.data.text ?? '')) };
  }
}

/** Characters as the service bills them: Unicode code points (an emoji is one). */
export function billedCharacters(text: string): number {
  return [...text].length;
}

/** Strict base64 decoding: Node's decoder silently skips junk, which would hide a broken server. */
export function decodeBase64(text: string, endpoint: string): Buffer {
  const clean = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) {
    throw new CloudProtocolError(endpoint, 'audio is not valid base64');
  }
  return Buffer.from(clean, 'base64');
}
