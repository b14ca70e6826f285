// Module hook of the unit batches: a test/unit file's `import t from 'tap'` resolves to the subtest its batch opened for it (tap-of-file.mjs).
// Registered only by test/support/unit-batch.ts, in a batch's process: a unit file that tap runs alone imports tap itself.

const UNIT_FILE = /\/test\/unit\/[^/]+\.test\.ts$/;

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL && new URL(context.parentURL);
  if (specifier === 'tap' && parent?.protocol === 'file:' && UNIT_FILE.test(parent.pathname)) {
    const url = new URL('./tap-of-file.mjs', import.meta.url);
    url.searchParams.set('file', parent.pathname);
    return { url: url.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
