// One of the unit batches: its share of the test/unit files, in this one process, each a subtest named after its file (test/support/batch.ts).
import { runBatch } from '../support/batch.js';

await runBatch(import.meta.filename);
