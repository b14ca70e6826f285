// The client an agent gets before its service is up: calls ask for the start, wait, and reach the real client in their order; an abort ends one wait; a failed start fails every call with why.
import t from 'tap';
import { bindEmbedded } from '../../src/cloud/addresses.js';
import type { CloudClient } from '../../src/cloud/client.js';
import { deferredCloud } from '../../src/cloud/deferred.js';

/** A client that answers each call with its name and first argument, in a log (the real one is exercised in test/integration/process-service.test.ts). */
function recordingClient(log: string[]): CloudClient {
  const answer =
    (name: string) =>
    async (...args: unknown[]) => {
      log.push(`${name}:${String(args[0])}`);
      return name as never;
    };
  return {
    addresses: bindEmbedded(
      { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' },
      { url: 'http://127.0.0.1:1', wsUrl: 'ws://127.0.0.1:1', asrWsUrl: 'ws://127.0.0.1:1/asr', vlmWsUrl: 'ws://127.0.0.1:1/vlm' },
    ),
    chat: { create: answer('create'), events: answer('events'), stream: answer('stream') },
    tts: { speechlab: answer('speechlab'), speechlabStream: answer('speechlabStream'), speechb: answer('speechb') },
    openSpeechlabAsr: answer('openSpeechlabAsr'),
    openSpeechbAsr: answer('openSpeechbAsr'),
    openVision: answer('openVision'),
  };
}

const request = { model: 'm', messages: [] };

t.test('calls made before the service is up ask for it, wait, and reach it in the order they were made', async (t) => {
  let uses = 0;
  const d = deferredCloud(() => uses++);
  const log: string[] = [];
  const calls = [
    d.cloud.chat.events('a', request, { stream: true, signal: new AbortController().signal }),
    d.cloud.chat.create('b', request),
    d.cloud.tts.speechlab({ text: 'c' } as never, { signal: new AbortController().signal }),
    d.cloud.openVision({}),
  ];
  t.equal(uses, 4, 'each call asked for the service');
  t.equal(d.cloud.addresses, undefined, 'no addresses before the service is up');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(log, [], 'nothing reached a client yet');
  d.resolve(recordingClient(log));
  // A call made right after the service came up goes after the ones that waited.
  const late = d.cloud.chat.stream('e', request);
  t.same(await Promise.all([...calls, late]), ['events', 'create', 'speechlab', 'openVision', 'stream']);
  t.same(log, ['events:a', 'create:b', 'speechlab:[object Object]', 'openVision:[object Object]', 'stream:e'], 'in the order they were made');
  t.equal(d.cloud.addresses?.base_url, 'http://127.0.0.1:1', 'once up, the addresses are the service ones');
  t.equal(uses, 4, 'calls after the service is up do not ask again');
});

t.test('an abort ends one wait with its reason; the others still go through', async (t) => {
  const d = deferredCloud(() => {});
  const log: string[] = [];
  const abort = new AbortController();
  const aborted = d.cloud.chat.create('a', request, { signal: abort.signal });
  const kept = d.cloud.chat.create('b', request);
  abort.abort(new Error('tick cancelled'));
  await t.rejects(aborted, /tick cancelled/);
  const already = new AbortController();
  already.abort(new Error('gone before'));
  await t.rejects(d.cloud.openSpeechbAsr({ signal: already.signal }), /gone before/, 'an already aborted signal rejects at once');
  d.resolve(recordingClient(log));
  t.equal(await kept, 'create');
  t.same(log, ['create:b'], 'the aborted call never reached the service');
});

t.test('a service that did not start fails the waiting calls and every later one with why', async (t) => {
  const d = deferredCloud(() => {});
  const waiting = d.cloud.chat.create('a', request);
  d.reject(new Error('cannot start the service: disk full'));
  await t.rejects(waiting, /cannot start the service: disk full/);
  await t.rejects(d.cloud.tts.speechb({ text: 'x' } as never), /cannot start the service: disk full/);
  d.resolve(recordingClient([]));
  await t.rejects(d.cloud.chat.create('b', request), /disk full/, 'a failure is final');
});
