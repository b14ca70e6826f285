// Addresses that can never be reached, found before start: malformed URLs and reserved names that no resolver answers (`.invalid`).
import { ADDRESS_ENV, type AddressKey, type AddressSettings, DEFAULT_ADDRESSES, EMBEDDED } from '../cloud/addresses.js';
import { deviceNeeds } from './device-needs.js';
import type { AgentConfig } from './schema.js';

export interface AddressProblem {
  path: string;
  message: string;
  /**
   * The address is the built-in placeholder (nothing configured it): a warning, not an error. A file
   * that names no address is a hosted-service configuration waiting for its environment (a fleet sets
   * CORTEX_BASE_URL at deployment); an address written in the file or a variable is an error.
   */
  placeholder?: boolean;
}

/**
 * Why a host name can never resolve, or undefined. `.invalid` is reserved by RFC 2606/6761 to be
 * invalid everywhere; anything else may resolve somewhere, so only `cortexd doctor` (which tries
 * to connect) can say it is unreachable.
 */
export function neverResolves(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `not a URL: ${JSON.stringify(url)}`;
  }
  const host = parsed.hostname.replace(/\.$/, '').toLowerCase();
  if (parsed.protocol !== 'file:' && host === '') return `${JSON.stringify(url)} has no host name`;
  if (host === 'invalid' || host.endsWith('.invalid')) return `${host} never resolves (the .invalid domain is reserved to be unreachable)`;
  return undefined;
}

/**
 * Addresses the configuration's plugins call that can never resolve: each hosted-API address a
 * plugin uses (its `service` block or CORTEX_* variable), and each other server (a LocalLLM's
 * `base_url`, an MQTT broker). An address nothing uses is not a problem.
 */
export function unreachableAddresses(config: Pick<AgentConfig, 'modes' | 'cortex_llm'>, addresses: AddressSettings, envFile: string): AddressProblem[] {
  const problems: AddressProblem[] = [];
  const needs = deviceNeeds(config);
  for (const { address, reason } of needs.services ?? []) {
    const value = addresses[address as AddressKey];
    if (value === EMBEDDED) continue;
    const why = neverResolves(value);
    if (why) {
      problems.push({
        ...(value === DEFAULT_ADDRESSES[address as AddressKey] ? { placeholder: true } : {}),
        path: `service.${address}`,
        message: `${why}, and ${reason} calls it: set ${ADDRESS_ENV[address]} in ${envFile} or the environment to the hosted address, or write "embedded" for the local service`,
      });
    }
  }
  for (const { url, reason } of needs.network ?? []) {
    const why = neverResolves(url);
    if (why) problems.push({ path: reason.replace(/ \(.*\)$/, ''), message: `${why}: ${reason} cannot reach it; give an address it can resolve` });
  }
  return problems;
}
