// A pushed configuration reads the robot's environment (`${VAR}`) only where the robot's own file does: a secret cannot be moved into another field.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { variableRefusal } from '../../src/fleet/reload.js';

const SECRET = 'sk-robot-secret-0123456789abcdef';
const env = { ROBOT_KEY: SECRET, PROMPT_WORD: 'rest' };

/** A whole configuration whose `api_key`, prompt and (when given) a tool server's Authorization header are as given. */
const text = (apiKey: string, prompt: string, header?: string) => `{
  version: "v1.0.5", name: "v", default_mode: "idle", allow_manual_switching: true, mode_memory_enabled: false,
  api_key: "${apiKey}", system_governance: "obey", service: { base_url: "embedded" }, allowed_variables: ["PROMPT_WORD"],
  cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
  modes: { idle: { display_name: "Idle", description: "d", system_prompt_base: "${prompt}", hertz: 1, agent_inputs: [], agent_actions: [],
    ${header ? `mcp_servers: [{ name: "tools", transport: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer ${header}" } }],` : ''} } },
}`;

t.test('the same variable at the same place passes; moved elsewhere, or a new one, is refused by name, never by value', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-pushed-vars-'));
  const file = join(dir, 'v.json5');
  writeFileSync(file, text('${ROBOT_KEY}', 'rest'));
  const running = await loadConfig({ file }, { env });
  t.same(running.variables, [{ path: 'api_key', names: ['ROBOT_KEY'] }]);

  const same = await loadConfig({ file, text: text('${ROBOT_KEY}', 'rest, ${CONFIG_DIR}') }, { env });
  t.equal(variableRefusal(same, running), undefined, 'the same use, and a built-in variable, pass');

  const moved = await loadConfig({ file, text: text('${ROBOT_KEY}', 'say ${PROMPT_WORD}', '${ROBOT_KEY}') }, { env });
  const refused = variableRefusal(moved, running);
  t.equal(refused?.ok, false);
  t.match(refused?.reason, /reads 2 environment variables of this robot where v does not .*v keeps running/);
  t.same(refused?.lines, [
    "modes.idle.system_prompt_base: ${PROMPT_WORD} is not read there by this robot's own configuration",
    "modes.idle.mcp_servers[0].headers.Authorization: ${ROBOT_KEY} is not read there by this robot's own configuration",
  ]);
  t.notMatch(JSON.stringify(refused), SECRET, 'the value never appears');

  const none = await loadConfig({ file, text: text('', 'rest') }, { env });
  t.equal(variableRefusal(none, running), undefined, 'a pushed file that reads no variable passes');
});
