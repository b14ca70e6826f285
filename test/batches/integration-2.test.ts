// One of the integration batches: its share of the test/integration and test/hil files in one process, each a subtest named after it (test/support/batch.ts).
import { runBatch } from '../support/batch.js';

await runBatch(import.meta.filename);
