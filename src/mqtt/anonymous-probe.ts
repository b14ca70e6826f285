// Asks a broker whether it lets in a client with no credentials: one short connect with none, closed at once.
import mqtt from 'mqtt';
import type { BrokerSettings } from '../plugins/schemas/broker.js';
import { clientOptions } from './options.js';

/**
 * `open`: the broker accepted a client without user name, password or client certificate, so anyone
 * who reaches it may publish wherever its ACL lets anonymous clients (often everywhere);
 * `closed`: it refused such a client; `unknown`: no answer within `timeoutMs` or another error.
 * A robot that itself connects without credentials is `open` without asking.
 */
export type Anonymity = 'open' | 'closed' | 'unknown';

export function connectsWithoutCredentials(settings: BrokerSettings): boolean {
  return settings.username === undefined && settings.password === undefined && settings.certFile === undefined;
}

export function probeAnonymous(settings: BrokerSettings, timeoutMs = 3000): Promise<Anonymity> {
  if (connectsWithoutCredentials(settings)) return Promise.resolve('open');
  const anonymous: BrokerSettings = { url: settings.url, ...(settings.caFile ? { caFile: settings.caFile } : {}) };
  return new Promise((resolve) => {
    let done = false;
    let client: mqtt.MqttClient | undefined;
    const finish = (a: Anonymity) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      client?.end(true);
      resolve(a);
    };
    const timer = setTimeout(() => finish('unknown'), timeoutMs);
    try {
      client = mqtt.connect(
        settings.url,
        clientOptions(anonymous, { clientId: `cortexd_probe_${process.pid}_${Date.now().toString(36)}`, connectTimeout: timeoutMs, clean: true }),
      );
    } catch {
      finish('unknown');
      return;
    }
    client.on('connect', () => finish('open'));
    client.on('error', (err: Error & { code?: number }) => {
      // 134 bad user name or password, 135 not authorized (MQTT 5); 4 and 5 in MQTT 3.1.1.
      finish(err.code === 134 || err.code === 135 || err.code === 4 || err.code === 5 ? 'closed' : 'unknown');
    });
    client.on('close', () => finish('unknown'));
  });
}
