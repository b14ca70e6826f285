// One of the unit batches: its share of the test/unit files, in this one process, each a subtest named after its file (test/support/unit-batch.ts).
import { runUnitBatch } from '../support/unit-batch.js';

await runUnitBatch(import.meta.filename);
