// A child process running the local service on a free port with one API key, for benchmarks that keep the service's work off the measured event loop.
import { startService } from '../../dist/src/service/index.js';
import { createLogger } from '../../dist/src/log.js';

const service = await startService({ port: 0, dbPath: ':memory:', logger: createLogger({ level: 'silent' }), jwtSecret: 's'.repeat(32) });
const { apiKey } = service.admin.createApiKey('bench');
process.send({ url: service.url, wsUrl: service.wsUrl, apiKey });
// The parent ends this process by disconnecting (or dying) or by SIGTERM (lib/bench.js's clean-up): close the service
// then, so that its own children (the recogniser) end with it.
let closing;
const stop = () => {
  closing ??= service.close().finally(() => process.exit(0));
};
process.on('disconnect', stop);
process.on('SIGTERM', stop);
