// WebSim's access rule on port 0: acting needs the token, latching the e-stop does not; guesses are limited per peer; Origin scheme and *.localhost; weak tokens refused without echo; /api/state hides secret-like fields.
import t, { type Test } from 'tap';
import { request as httpRequest } from 'node:http';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import type { AgentControl } from '../../src/cortex/contracts.js';
import { AttemptLimiter, ATTEMPTS_PER_WINDOW } from '../../src/websim/auth.js';
import { resolveWebSimOptions, WebSimError } from '../../src/websim/options.js';
import { WebSim } from '../../src/websim/server.js';
import { generateToken, tokenWeakness } from '../../src/websim/token.js';
import { client, stubAgent } from '../helpers/websim.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const logger = pino({ level: 'silent' });
const MAIN = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const loaded = await loadConfig({ name: 'default' });
const TOKEN = 'Xk2-pQ9_vR4mT7wZs1nB8cY3';

/** GET `path` with raw headers (fetch cannot set Host or every Origin); resolves with status and body. */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, ...(res.headers['retry-after'] ? { retryAfter: String(res.headers['retry-after']) } : {}) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

async function started(t: Test, config: AgentControl['config'], token?: string) {
  const { agent, calls } = stubAgent(config);
  let latched = 0;
  agent.estop = () => void latched++;
  const stateDir = mkdtempSync(join(tmpdir(), 'cortexd-websim-access-'));
  const sim = new WebSim(resolveWebSimOptions({ port: 0, ...(token ? { token } : {}) }, {}), { agent, logger, stateDir });
  t.teardown(() => sim.stop());
  await sim.start();
  return { sim, url: sim.url!, ws: `${sim.url!.replace('http', 'ws')}events`, calls, latched: () => latched };
}

t.test('without the token a page watches and latches the e-stop; every action is refused and reaches nothing', async (t) => {
  const { ws, calls, latched } = await started(t, loaded.config);
  const c = await client(ws);
  t.teardown(() => c.ws.close());
  t.match(await c.next((m) => m.type === 'access'), { authed: false });
  c.ws.send(JSON.stringify({ type: 'estop', id: 1 }));
  t.match(await c.next((m) => m.type === 'reply' && m.id === 1), { id: 1 }, 'the stop is answered');
  t.equal(latched(), 1, 'latching reached the agent (a stop is always safe)');
  const refused = [
    { type: 'text', id: 2, text: 'turn left' },
    { type: 'mode.switch', id: 3, mode: 'sleep' },
    { type: 'context', id: 4, name: 'visitor', value: 'true' },
  ];
  for (const m of refused) {
    c.ws.send(JSON.stringify(m));
    t.match(
      await c.next((r) => r.type === 'reply' && r.id === m.id),
      { ok: false, reason: new RegExp(`^${m.type} needs the WebSim token`) },
      `${m.type} refused`,
    );
  }
  c.ws.send(JSON.stringify({ type: 'estop.release', id: 5, token: 'not-the-token-at-all' }));
  t.match(await c.next((r) => r.type === 'reply' && r.id === 5), { ok: false, reason: 'wrong WebSim token' }, 'release with a wrong token refused');
  t.same(calls, { texts: [], switches: [] });
});

t.test('token guesses: ATTEMPTS_PER_WINDOW wrong ones lock the peer out, even from the right token, with Retry-After', async (t) => {
  const { url, ws } = await started(t, loaded.config, TOKEN);
  for (let i = 0; i < ATTEMPTS_PER_WINDOW; i++)
    t.equal((await get(`${url}api/state`, { host: new URL(url).host, 'x-websim-token': `guess-${i}-guess-guess` })).status, 401);
  const locked = await get(`${url}api/state`, { host: new URL(url).host, 'x-websim-token': TOKEN });
  t.equal(locked.status, 429, 'locked out: the right token is not even compared');
  t.match(locked.body, /too many wrong tokens/);
  t.ok(Number(locked.retryAfter) >= 1, 'Retry-After says how long');
  await t.rejects(client(`${ws}?token=${TOKEN}`), /HTTP 429/, 'the socket too');
  t.notMatch(locked.body, TOKEN);
});

t.test('the limiter: a window of failures locks out with growing waits; a right token resets', async (t) => {
  let now = 0;
  const limiter = new AttemptLimiter(() => now);
  const wrong = () => limiter.attempt('p', () => false);
  for (let i = 0; i < ATTEMPTS_PER_WINDOW - 1; i++) t.same(wrong(), { result: 'wrong' });
  t.same(wrong(), { result: 'wrong' });
  t.equal(limiter.lockedFor('p'), 1000, 'first lockout 1 s');
  t.match(
    limiter.attempt('p', () => true),
    { result: 'locked' },
  );
  t.equal(limiter.lockedFor('other'), 0, 'per peer');
  now += 1000;
  for (let i = 0; i < ATTEMPTS_PER_WINDOW; i++) wrong();
  t.equal(limiter.lockedFor('p'), 2000, 'the second is longer');
  now += 2000;
  t.same(
    limiter.attempt('p', () => true),
    { result: 'ok' },
  );
  for (let i = 0; i < ATTEMPTS_PER_WINDOW; i++) wrong();
  t.equal(limiter.lockedFor('p'), 1000, 'a right token reset the growth');
});

t.test('Origin must match scheme and host; a *.localhost Host is no loopback name', async (t) => {
  const { url } = await started(t, loaded.config);
  const host = new URL(url).host;
  t.equal((await get(`${url}api/state`, { host, origin: `http://${host}` })).status, 200, 'the page itself');
  t.equal((await get(`${url}api/state`, { host, origin: `https://${host}` })).status, 403, 'same host, other scheme');
  t.equal((await get(`${url}api/state`, { host, origin: `ftp://${host}` })).status, 403);
  t.equal((await get(`${url}api/state`, { host: `evil.localhost:${new URL(url).port}` })).status, 403, '*.localhost is a name anyone may point anywhere');
  t.equal((await get(`${url}api/state`, { host: `localhost:${new URL(url).port}` })).status, 200);
});

t.test('weak tokens are refused in config and environment, and the message never repeats them', async (t) => {
  for (const weak of ['aaaaaaaaaaaaaaaa', 'abcdefghijklmnop', '1234567890123456', 'abababababababababab', 'short']) {
    t.ok(tokenWeakness(weak), `${weak.slice(0, 4)}... is weak`);
    const e1 = t.throws(() => resolveWebSimOptions({ token: weak }, {})) as WebSimError;
    t.ok(e1 instanceof WebSimError);
    t.notMatch(e1.message, weak, 'config error does not print the token');
    const e2 = t.throws(() => resolveWebSimOptions({}, { CORTEX_WEBSIM_TOKEN: weak })) as WebSimError;
    t.match(e2.message, /^CORTEX_WEBSIM_TOKEN: /);
    t.notMatch(e2.message, weak, 'environment error does not print the token');
  }
  for (let i = 0; i < 50; i++) t.equal(tokenWeakness(generateToken()), undefined, 'every generated token passes');
  t.equal(tokenWeakness(TOKEN), undefined);
});

t.test('/api/state hides secret-like fields by rule, not by list', async (t) => {
  const config = structuredClone(loaded.config) as AgentControl['config'] & Record<string, unknown>;
  const mode = Object.values(config.modes)[0]! as unknown as Record<string, unknown>;
  mode.extras = {
    wifi_passphrase: 'PASS-PHRASE-1',
    authorization_header: 'AUTHZ-2',
    bearer: 'BEARER-3',
    aws_access_key: 'ACCESS-4',
    pin: '4711',
    doorPin: '8080',
    max_tokens: 512,
  };
  const { url } = await started(t, config);
  const res = await get(`${url}api/state`, { host: new URL(url).host });
  t.equal(res.status, 200);
  t.notMatch(res.body, /PASS-PHRASE-1|AUTHZ-2|BEARER-3|ACCESS-4|4711|8080/, 'no secret-like value reaches the page');
  t.match(res.body, /"max_tokens":512/, 'counts stay readable');
});

t.test(
  'cortexd check names a weak token and a numeric api_key without printing either',
  { skip: !existsSync(MAIN) && 'run npm run build first' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cortexd-check-secrets-'));
    const write = (name: string, apiKey: unknown, token: string) => {
      const file = join(dir, `${name}.json5`);
      writeFileSync(
        file,
        JSON.stringify({
          version: 'v1.0.5',
          name,
          default_mode: 'a',
          allow_manual_switching: true,
          mode_memory_enabled: false,
          api_key: apiKey,
          system_governance: '',
          system_prompt_examples: '',
          service: { base_url: 'embedded' },
          cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini' } },
          modes: {
            a: {
              display_name: 'A',
              description: 'a',
              system_prompt_base: 'x',
              hertz: 1,
              agent_inputs: [],
              agent_actions: [],
              simulators: [{ type: 'WebSim', config: { token } }],
            },
          },
          transition_rules: [],
        }),
      );
      return file;
    };
    const check = (file: string) =>
      spawnSync(process.execPath, [MAIN, 'check', '--config', file], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 30_000 });
    const numeric = check(write('numeric', 98765432, 'Xk2-pQ9_vR4mT7wZs1nB8cY3'));
    t.equal(numeric.status, 2);
    t.match(numeric.stdout + numeric.stderr, /api_key: expected a string, got a number \(not shown: a secret field\)/);
    t.notMatch(numeric.stdout + numeric.stderr, /98765432/, 'the numeric key is not printed');
    for (const weak of ['aaaaaaaaaaaaaaaa', 'tooShort1']) {
      const r = check(write('weak', 'openmind_free', weak));
      t.equal(r.status, 2, `${weak.length}-character token refused`);
      t.match(r.stdout + r.stderr, /modes\.a\.simulators\[0\]\.config\.token: a WebSim token/);
      t.notMatch(r.stdout + r.stderr, weak, 'the token is not printed');
    }
  },
);
