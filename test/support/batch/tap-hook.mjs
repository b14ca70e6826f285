// Module hook of the batches: a batched file's `import t from 'tap'` resolves to the subtest its batch opened for it (tap-of-file.mjs).
// Registered only by test/support/batch.ts, in a batch's process: a file that tap runs alone imports tap itself.

const BATCHED_FILE = /\/test\/(unit|integration|hil)\/[^/]+\.test\.ts$/;

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL && new URL(context.parentURL);
  if (specifier === 'tap' && parent?.protocol === 'file:' && BATCHED_FILE.test(parent.pathname)) {
    const url = new URL('./tap-of-file.mjs', import.meta.url);
    url.searchParams.set('file', parent.pathname);
    return { url: url.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
