// Proves the inspector sanitiser strips media and secrets, and that the mode inspector can be created without connecting.
import t from 'tap';
import { createActor, createMachine } from 'xstate';
import { createInspector } from '@statelyai/inspect';
import { createModeInspector, inspectorOptions, sanitizeForInspector } from '../../actors/modes/inspect.js';

t.test('media becomes a size note; secrets are redacted; plain data survives', async (t) => {
  const jpeg = Buffer.alloc(5000, 1);
  const b64 = Buffer.alloc(3000, 7).toString('base64');
  const out = sanitizeForInspector({
    type: 'vlm.frame',
    frame: jpeg,
    pcm: new Int16Array(160),
    image: b64,
    url: 'data:image/jpeg;base64,AAAA',
    api_key: 'key_live_abcdefghijkl',
    text: 'my key is key_live_abcdefghijkl ok',
    nested: [{ token: 'x' }, 'short text'],
    count: 3,
  });
  t.same(out, {
    type: 'vlm.frame',
    frame: '[binary 5000 bytes]',
    pcm: '[binary 320 bytes]',
    image: `[base64 ${b64.length} chars]`,
    url: '[base64 27 chars]',
    api_key: '[REDACTED]',
    text: 'my key is key_live_[REDACTED] ok',
    nested: [{ token: '[REDACTED]' }, 'short text'],
    count: 3,
  });
  t.equal(sanitizeForInspector(new AbortController().signal), '[AbortSignal]');
});

t.test('events and context reaching the inspector are sanitised', async (t) => {
  const sent: unknown[] = [];
  const inspector = createInspector({ start() {}, stop() {}, send: (e: unknown) => void sent.push(e) }, inspectorOptions({ autoStart: true }));
  const machine = createMachine({ initial: 'a', context: { api_key: 'key_live_abcdefghijkl' }, states: { a: { on: { 'vlm.frame': 'b' } }, b: {} } });
  const actor = createActor(machine, { inspect: inspector.inspect });
  actor.start();
  actor.send({ type: 'vlm.frame', jpeg: Buffer.alloc(100) } as never);
  // The inspector delivers on an idle callback: wait for the frame event, bounded.
  const deadline = Date.now() + 2000;
  while (!JSON.stringify(sent).includes('vlm.frame') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  actor.stop();
  const text = JSON.stringify(sent);
  t.ok(text.includes('[binary 100 bytes]'), 'the frame is replaced');
  t.notOk(text.includes('abcdefghijkl'), 'no secret reaches the inspector');
  t.equal(actor.getSnapshot().value, 'b');
  const ws = createModeInspector({ autoStart: false });
  t.type(ws.inspect.next, 'function', 'the WebSocket inspector is an XState inspection observer');
  ws.stop();
});

t.test('a promise actor whose input holds the configuration shows no secret and no media in any message', async (t) => {
  const { fromPromise, setup } = await import('xstate');
  const sent: unknown[] = [];
  const inspector = createInspector({ start() {}, stop() {}, send: (e: unknown) => void sent.push(e) }, inspectorOptions({ autoStart: true }));
  const secretConfig = { api_key: 'key_live_abcdefghijkl', service: { base_url: 'http://x/?api_key=zzzsecretzzz' }, clip: Buffer.alloc(64) };
  const machine = setup({
    actors: { work: fromPromise(async ({ input }: { input: { config: typeof secretConfig } }) => ({ echoed: input.config.api_key })) },
  }).createMachine({
    initial: 'run',
    states: { run: { invoke: { src: 'work', input: () => ({ config: secretConfig }), onDone: 'done' } }, done: { type: 'final' } },
  });
  const actor = createActor(machine, { inspect: inspector.inspect });
  const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
  actor.start();
  await done;
  const deadline = Date.now() + 2000;
  while (!JSON.stringify(sent).includes('"output"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const text = JSON.stringify(sent);
  t.ok(text.includes('"input"'), 'the promise actor input was inspected');
  t.ok(text.includes('"output"'), 'and its output');
  t.notOk(text.includes('abcdefghijkl'), 'no key in snapshots, inputs or outputs');
  t.notOk(text.includes('zzzsecretzzz'), 'no key in addresses');
  t.ok(text.includes('[binary 64 bytes]'), 'the buffer is a size note');
});
