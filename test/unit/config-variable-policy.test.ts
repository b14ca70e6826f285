// A configuration reads only the documented variables and those it lists, and a secret only into a credential field: ${HOME}, ${OM_API_KEY} or a password in a prompt never reach the model server.
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const env = { OM_API_KEY: 'key_live_0123456789abcdef0123456789abcdef', HOME: '/root', MY_DB_PASSWORD: 'hunter2', MOTOR_PORT: '/dev/ttyUSB0', FOO: 'bar' };

function file(o: { prompt?: string; allowed?: string[]; header?: string }): string {
  return JSON.stringify({
    version: 'v1.0.5',
    name: 'robot',
    default_mode: 'idle',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    system_governance: 'obey',
    api_key: '${OM_API_KEY:-openmind_free}',
    ...(o.allowed ? { allowed_variables: o.allowed } : {}),
    cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini' } },
    modes: {
      idle: {
        display_name: 'Idle',
        description: 'd',
        system_prompt_base: o.prompt ?? 'You are a robot.',
        hertz: 1,
        ...(o.header
          ? { mcp_servers: [{ name: 'files', transport: 'http', url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: `Bearer ${o.header}` } }] }
          : {}),
      },
    },
  });
}

async function problems(text: string): Promise<string[]> {
  try {
    await loadConfig({ file: '/robot/robot.json5', text }, { env });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => `${i.path}: ${i.message}`);
    throw err;
  }
}

t.test('the audit: ${HOME}, ${OM_API_KEY} and ${MY_DB_PASSWORD} in a prompt are refused, each with its path and fix', async (t) => {
  t.match(await problems(file({ prompt: 'I live in ${HOME}' })), [
    /^modes\.idle\.system_prompt_base: \$\{HOME\} is not a variable a configuration may read .*add "HOME" to allowed_variables/,
  ]);
  t.match(await problems(file({ prompt: 'my key is ${OM_API_KEY}' })), [/^modes\.idle\.system_prompt_base: \$\{OM_API_KEY\} is a secret .*credential field/]);
  t.match(await problems(file({ prompt: 'db ${MY_DB_PASSWORD}' })), [/\$\{MY_DB_PASSWORD\} is a secret/]);
  const listed = await problems(file({ prompt: 'db ${MY_DB_PASSWORD}', allowed: ['MY_DB_PASSWORD'] }));
  t.match(listed, [/\$\{MY_DB_PASSWORD\} is a secret/], 'listing a secret does not let it into text');
  for (const p of [...(await problems(file({ prompt: 'I live in ${HOME}' })))]) t.notMatch(p, '/root', 'values are never echoed');
});

t.test('allowed: documented names, setting-shaped names, listed names, secrets in credential fields', async (t) => {
  t.same(await problems(file({})), [], 'api_key: ${OM_API_KEY}');
  t.same(await problems(file({ prompt: 'motor on ${MOTOR_PORT}, state in ${STATE_DIR}' })), []);
  t.same(await problems(file({ prompt: 'say ${FOO}', allowed: ['FOO'] })), []);
  t.same(await problems(file({ header: '${MY_DB_PASSWORD}' })), [], 'a header is a credential field');
  t.same(await problems(file({ prompt: 'literal $${HOME} text' })), [], 'an escaped reference reads nothing');
});

t.test('an unset variable is judged too: the file reads it as soon as someone sets it', async (t) => {
  t.match(await problems(file({ prompt: '${NOT_SET_ANYWHERE:-x}' })), [/NOT_SET_ANYWHERE.* is not a variable a configuration may read/]);
});
