// A child process running the local service on a free port with one API key, for benchmarks that keep the service's work off the measured event loop.
import { startService } from '../../dist/src/service/index.js';
import { createLogger } from '../../dist/src/log.js';

const service = await startService({ port: 0, dbPath: ':memory:', logger: createLogger({ level: 'silent' }), jwtSecret: 's'.repeat(32) });
const { apiKey } = service.admin.createApiKey('bench');
process.send({ url: service.url, wsUrl: service.wsUrl, apiKey });
// The parent ends this process by disconnecting (or dying): close the service then.
process.on('disconnect', () => void service.close().finally(() => process.exit(0)));
