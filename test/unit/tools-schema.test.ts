// Proves the tools offered to the model: one per action named by llm_label, real JSON Schema types and enums, MCP tools appended.
import t from 'tap';
import { actionForTool, toolName, toolsForMode } from '../../src/cortex/tools.js';
import { ToolDefinitionSchema, type ToolDefinition } from '../../src/cloud/protocol.js';
import type { ActionConfig } from '../../src/config/schema.js';

const entry = (name: string, llm_label: string, extra: Partial<ActionConfig> = {}): ActionConfig => ({
  name,
  llm_label,
  connector: 'console',
  implementation: 'passthrough',
  config: {},
  exclude_from_prompt: false,
  ...extra,
});

const mcpTool: ToolDefinition = { type: 'function', function: { name: 'mcp_everything_echo', description: 'echo', parameters: { type: 'object' } } };

t.test('one tool per action, named by llm_label, with the JSON Schema of its args', async (t) => {
  const tools = toolsForMode([entry('speak', 'speak'), entry('move', 'move'), entry('face', 'emotion', { exclude_from_prompt: true })], [mcpTool]);
  t.same(
    tools.map((x) => x.function.name),
    ['speak', 'move', 'emotion', 'mcp_everything_echo'],
  );
  for (const tool of tools) t.ok(ToolDefinitionSchema.safeParse(tool).success, `${tool.function.name} is a valid tool definition`);
  const speak = tools[0]!.function.parameters as Record<string, any>;
  t.equal(speak.type, 'object');
  t.same(speak.required, ['sentence']);
  t.equal(speak.properties.sentence.type, 'string');
  t.equal(speak.properties.sentence.minLength, 1);
  t.match(speak.properties.sentence.description, /what to say/);
  t.notOk('$schema' in speak);
  const move = tools[1]!.function.parameters as Record<string, any>;
  t.ok(move.properties.action.enum.includes('turn left'));
  t.same(move.required, ['action']);
  t.match(tools[2]!.function.description, /expression.*action face, "emotion"/);
});

t.test('labels with spaces become valid tool names and still find their action', async (t) => {
  const actions = [entry('move', 'external movement controller')];
  const [tool] = toolsForMode(actions, []);
  t.equal(tool!.function.name, 'external_movement_controller');
  t.equal(
    actionForTool(
      actions.map((e) => ({ entry: e })),
      'external_movement_controller',
    )?.entry.llm_label,
    'external movement controller',
  );
  t.equal(
    actionForTool(
      actions.map((e) => ({ entry: e })),
      'nope',
    ),
    undefined,
  );
  t.equal(toolName('x'.repeat(80)).length, 64);
});

t.test('unknown actions are skipped and a duplicate name keeps the first', async (t) => {
  const tools = toolsForMode([entry('teleport', 'teleport'), entry('speak', 'say'), entry('move', 'say')], []);
  t.same(
    tools.map((x) => [x.function.name, x.function.description?.split(' (')[0]]),
    [['say', 'say a sentence out loud']],
  );
});
