// What a file run in a batch gets as `import t from 'tap'`: the batch's subtest named after that file (one module per file, by its URL).
const file = new URL(import.meta.url).searchParams.get('file');
const t = globalThis[Symbol.for('cortexd.batch')]?.get(file);
if (!t) throw new Error(`${file} imported tap in a batch process, but its batch opened no subtest for it (test/support/batch.ts)`);
export default t;
