// The process root's `service` actor with the real embedded service: it waits for the first tick or the first call, answers the calls that waited, closes what opened when stopped during its start, and fails waiting calls with why.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, setup, type AnyActorRef } from 'xstate';
import { SERVICE_START_WAIT_MS, serviceKey, serviceLink, serviceMachine, type ServiceHolder, type ServiceReport } from '../../actors/process/service.js';
import { loadConfig } from '../../src/config/load.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { connectService, type ServiceConnection } from '../../src/cortex/embedded.js';
import { createLogger } from '../../src/log.js';

t.setTimeout(120_000);

const CONFIG = `{
  version: "v1.0.5", name: "svc", default_mode: "m", api_key: "", allow_manual_switching: false, mode_memory_enabled: false,
  system_governance: "obey", service: { base_url: "embedded" },
  cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
  modes: { m: { display_name: "M", description: "d", system_prompt_base: "rest", hertz: 1, agent_inputs: [],
    agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] } },
}`;

const logger = createLogger({ level: 'silent' });

/** A service actor under a small parent (as under the process root), with what it reported and every connection it opened. */
async function rig(t: Test, connect?: (l: LoadedConfig) => Promise<ServiceConnection>) {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-process-service-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'svc.json5');
  writeFileSync(file, CONFIG);
  const loaded = await loadConfig({ file });
  const opened: Array<Promise<ServiceConnection>> = [];
  const h: ServiceHolder = {
    wanted: () => loaded,
    connect: (l) => {
      const p = connect ? connect(l) : connectService(l, { logger, dbPath: ':memory:', stateDir: dir });
      opened.push(p);
      return p;
    },
    logger,
    service: undefined,
    link: serviceLink(serviceKey(loaded)),
    serviceClosed: Promise.resolve(),
  };
  const reports: ServiceReport['type'][] = [];
  const parent = createActor(
    setup({ actors: { service: serviceMachine(h) } }).createMachine({
      invoke: { id: 'service', src: 'service', input: { config: 'svc' } },
      on: {
        'service.linked': { actions: () => reports.push('service.linked') },
        'service.up': { actions: () => reports.push('service.up') },
        'service.failed': { actions: () => reports.push('service.failed') },
      },
    }),
  );
  parent.start();
  t.teardown(() => parent.stop());
  const child = () => parent.getSnapshot().children.service as AnyActorRef;
  const until = (what: string, ok: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const poll = setInterval(() => {
        if (ok()) return clearInterval(poll), resolve();
        if (Date.now() - started > 60_000) clearInterval(poll), reject(new Error(`timed out waiting for ${what}; reports: ${reports.join(', ')}`));
      }, 10);
    });
  return { h, loaded, opened, reports, parent, child, until, cloud: h.link!.deferred.cloud };
}

/** True when something accepts connections at the URL's port. */
const accepts = (url: string) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port: Number(new URL(url).port) });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

const ask = { model: 'gen-4o-mini', messages: [{ role: 'user' as const, content: 'what is your name' }] };

t.test('it waits (nothing opened) until told; a call made meanwhile opens it and gets its answer', async (t) => {
  const r = await rig(t);
  t.same(r.reports, ['service.linked'], 'the root hears that the actor runs');
  t.ok(r.child().getSnapshot().hasTag('waiting'), 'the service waits');
  t.equal(r.opened.length, 0, 'nothing opened before the first tick or call');
  const answers = [r.cloud.chat.create('provider_a', ask), r.cloud.chat.create('provider_a', { ...ask, messages: [{ role: 'user', content: 'hello' }] })];
  const [first, second] = await Promise.all(answers);
  t.match(first?.choices[0]?.message, { role: 'assistant' }, 'the call made before the service was up is answered by it');
  t.ok((second?.choices.length ?? 0) > 0, 'so is the next one');
  t.equal(r.opened.length, 1, 'one connection for both');
  t.same(r.reports, ['service.linked', 'service.up']);
  t.ok(r.child().getSnapshot().hasTag('up'));
  const conn = await r.opened[0]!;
  t.ok(await accepts(conn.embedded!.url), 'the service listens');
  r.parent.stop();
  await r.h.serviceClosed;
  t.notOk(await accepts(conn.embedded!.url), 'stopped: the service no longer listens');
});

t.test('the first tick opens it (service.start from the root)', async (t) => {
  const r = await rig(t);
  r.child().send({ type: 'service.start' });
  await r.until('service.up', () => r.reports.includes('service.up'));
  t.equal(r.opened.length, 1);
  t.ok(r.h.service, 'the holder has the open connection');
});

t.test(`with neither a tick nor a call (long start-up hooks), it opens after ${SERVICE_START_WAIT_MS} ms`, async (t) => {
  const r = await rig(t);
  const started = Date.now();
  await r.until('service.up', () => r.reports.includes('service.up'));
  t.ok(Date.now() - started >= SERVICE_START_WAIT_MS - 50, 'not before the wait was over');
  t.equal(r.opened.length, 1);
});

t.test('stopped while the service opens: what opened is closed before the process may end, and the waiting call fails with why', async (t) => {
  // The service opens for real, but its connection is handed over only once the actor was stopped.
  let handOver: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (handOver = resolve));
  const r = await rig(t, async (l) => {
    const conn = await connectService(l, { logger, dbPath: ':memory:' });
    await stopped;
    return conn;
  });
  const call = r.cloud.chat.create('provider_a', ask);
  await r.until('the service to be opening', () => r.opened.length === 1);
  r.parent.stop();
  handOver();
  await t.rejects(call, /stopped before it was up/, 'the waiting call says why it failed');
  await r.h.serviceClosed;
  const conn = await r.opened[0]!;
  t.notOk(await accepts(conn.embedded!.url), 'the connection that opened after the stop was closed');
  t.notOk(r.reports.includes('service.up'), 'never reported up');
});

t.test('stopped while waiting: nothing opens and later calls fail with why', async (t) => {
  const r = await rig(t);
  r.parent.stop();
  await t.rejects(r.cloud.chat.create('provider_a', ask), /stopped before it was up/);
  t.equal(r.opened.length, 0, 'nothing was opened');
});

t.test('a service that cannot start: service.failed, and the waiting calls fail with the reason', async (t) => {
  // Under a regular file: no directory can be made there, not even by root.
  const r = await rig(t, (l) => connectService(l, { logger, dbPath: join(l.file, 'cloud.sqlite') }));
  await t.rejects(r.cloud.chat.create('provider_a', ask), /cannot start the service: .+/);
  await r.until('service.failed', () => r.reports.includes('service.failed'));
  t.same(r.reports, ['service.linked', 'service.failed']);
});
