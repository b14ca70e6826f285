// Account client: balance and API-key management with an identity-provider JWT as Bearer.
import { CloudValidationError } from './errors.js';
import { CloudHttp, type Credential } from './http.js';
import {
  BalanceRecordSchema,
  CreateKeyResponseSchema,
  DeleteKeyResponseSchema,
  ListKeysResponseSchema,
  PATHS,
  type ApiKeyRecord,
  type BalanceRecord,
  type CreateKeyResponse,
  type DeleteKeyResponse,
} from './protocol.js';

export interface AccountCallOptions {
  signal?: AbortSignal;
}

export interface AccountClientOptions {
  http: CloudHttp;
  jwt: string;
}

/**
 * `GET /api/core/account/balance`, `GET /api/core/api_keys`, `POST /api/core/api_keys/create`,
 * `POST /api/core/api_keys/delete`. Errors are the typed CloudHttpError subclasses (401 `User not found`,
 * 403 plan limit, 404 `API key not found`, ...). A 429 is retried per the client's policy.
 */
export class AccountClient {
  private readonly http: CloudHttp;
  private readonly credential: Credential;

  constructor(options: AccountClientOptions) {
    this.http = options.http;
    this.credential = { kind: 'bearer', token: options.jwt };
  }

  private opts(signal?: AbortSignal): { signal?: AbortSignal } {
    return signal ? { signal } : {};
  }

  async balance(options: AccountCallOptions = {}): Promise<BalanceRecord> {
    return this.http.json({ method: 'GET', path: PATHS.balance, credential: this.credential, ...this.opts(options.signal) }, BalanceRecordSchema);
  }

  /** Active keys only; never contains secrets. */
  async listKeys(options: AccountCallOptions = {}): Promise<ApiKeyRecord[]> {
    const res = await this.http.json(
      { method: 'GET', path: PATHS.listKeys, credential: this.credential, ...this.opts(options.signal) },
      ListKeysResponseSchema,
    );
    return res.api_keys;
  }

  /** Creates a key. `api_key` in the result is the full secret: it is shown by the server this once only. */
  async createKey(options: AccountCallOptions = {}): Promise<CreateKeyResponse> {
    return this.http.json({ method: 'POST', path: PATHS.createKey, credential: this.credential, ...this.opts(options.signal) }, CreateKeyResponseSchema);
  }

  /** Deletes (invalidates) a key by id; not undoable. */
  async deleteKey(id: string, options: AccountCallOptions = {}): Promise<DeleteKeyResponse> {
    if (!id.trim()) throw new CloudValidationError(CloudHttp.endpoint({ method: 'POST', path: PATHS.deleteKey }), ['id: required']);
    return this.http.json(
      { method: 'POST', path: PATHS.deleteKey, body: { id }, credential: this.credential, ...this.opts(options.signal) },
      DeleteKeyResponseSchema,
    );
  }
}
