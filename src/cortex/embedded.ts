// Connects the runtime to its service: the configured hosted addresses, or the local service started in-process for `embedded`.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { bindEmbedded, needsEmbedded, requireResolved, type ResolvedAddresses } from '../cloud/addresses.js';
import { createCloudClient, type CloudClient } from '../cloud/client.js';
import type { LoadedConfig } from '../config/schema.js';
import { stateDir } from '../paths.js';
import type { RunningService } from '../service/index.js';

export interface ServiceConnection {
  cloud: CloudClient;
  addresses: ResolvedAddresses;
  /** The in-process local service when the configuration asked for `embedded`. */
  embedded?: RunningService;
  /** Closes the embedded service (nothing to do for a hosted one). Safe to call twice. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  logger: Logger;
  /**
   * SQLite file of the embedded service. Default `<state dir>/cloud.sqlite`, the same database as
   * `cortexd cloud`, so usage and balances persist across restarts; `:memory:` for throwaway runs.
   */
  dbPath?: string;
  stateDir?: string;
}

/** Name of the local account an embedded runtime uses: one per configuration, so two agents do not revoke each other's key. */
export const embeddedUser = (configName: string): string => `embedded:${configName}`;

/**
 * Resolves the service addresses. When any address is `embedded` the local service starts on a free
 * loopback port; its account for this configuration is on the enterprise plan and gets a fresh key at
 * every start (a key's secret cannot be read back), which the client then uses instead of `api_key`.
 */
export async function connectService(loaded: LoadedConfig, options: ConnectOptions): Promise<ServiceConnection> {
  if (!needsEmbedded(loaded.addresses)) {
    const addresses = requireResolved(loaded.addresses);
    return { cloud: createCloudClient({ addresses, apiKey: loaded.apiKey }), addresses, close: async () => {} };
  }
  const dir = options.stateDir ?? stateDir();
  if (!options.dbPath) mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The service's code (fastify, SQLite, its routes: ~20 ms of module loading) loads when it starts,
  // which `cortexd run` does after the agent's first tick (actors/process/service.ts).
  const { startService } = await import('../service/index.js');
  const service = await startService({
    port: 0,
    dbPath: options.dbPath ?? join(dir, 'cloud.sqlite'),
    logger: options.logger.child({ component: 'embedded-service' }),
  });
  const { apiKey } = service.admin.rotateApiKey(embeddedUser(loaded.configName), 'enterprise');
  const addresses = bindEmbedded(loaded.addresses, service);
  // Every embedded address uses the local key; a hosted base_url keeps the configured key.
  const key = loaded.addresses.base_url === 'embedded' ? apiKey : loaded.apiKey;
  let closed: Promise<void> | undefined;
  return {
    cloud: createCloudClient({ addresses, apiKey: key }),
    addresses,
    embedded: service,
    close: () => (closed ??= service.close()),
  };
}
