// Proves the plugin registry: every descriptor has a loader, a configuration loads exactly its plugins (in parallel), lookups fail naming the known names.
import t from 'tap';
import { builtinPlugins, resolvePlugins, withPlugins, type PluginRegistry } from '../../actors/plugin-registry.js';
import { loadConfig } from '../../src/config/load.js';
import { PluginError } from '../../src/errors.js';
import { descriptors } from '../../src/plugins/index.js';
import { pluginRegistry } from '../../src/cortex/plugins-resolve.js';
import type { PluginLoaders } from '../../src/cortex/plugins.js';
import { actionEntry } from '../helpers/plugins.js';

/** The built-in registry with each loader counted by `kind:name` (the code is still loaded for real). */
function counted(): { registry: PluginRegistry; loaded: string[] } {
  const loaded: string[] = [];
  const wrap =
    <F>(name: string, load: () => Promise<F>) =>
    () => (loaded.push(name), load());
  const l = builtinPlugins.loaders;
  const map = <F>(kind: string, r: Record<string, () => Promise<F>>) => Object.fromEntries(Object.entries(r).map(([n, f]) => [n, wrap(`${kind}:${n}`, f)]));
  const loaders: PluginLoaders = {
    inputs: map('input', l.inputs),
    llms: map('llm', l.llms),
    simulators: map('simulator', l.simulators),
    connectors: Object.fromEntries(Object.entries(l.connectors).map(([a, r]) => [a, map(`connector:${a}`, r)])),
  };
  return { registry: pluginRegistry(builtinPlugins.descriptors, loaders), loaded };
}

const mode = (
  m: Partial<{
    agent_inputs: Array<{ type: string }>;
    agent_actions: Array<{ name: string; connector: string }>;
    simulators: Array<{ type: string }>;
    cortex_llm: { type: string };
    remember_locations: boolean;
  }>,
) => ({
  agent_inputs: [],
  agent_actions: [],
  simulators: [],
  ...m,
});

t.test('the built-in registry pairs every descriptor with a loader that yields a factory', async (t) => {
  const d = builtinPlugins.descriptors;
  t.same(d.inputs.names(), [
    'BatteryInput',
    'BodyInput',
    'GpsInput',
    'LidarInput',
    'LocalVLMInput',
    'MqttInput',
    'PresenceInput',
    'Ros2TopicInput',
    'SerialReader',
    'SpeechbASRInput',
    'SpeechlabASRInput',
    'TextInput',
    'VLMInput',
  ]);
  t.same(d.llms.names(), ['CloudLLM', 'LocalLLM', 'MultiLLM']);
  t.same(d.simulators.names(), ['WebSim']);
  t.same(Object.fromEntries(d.actions.all().map((a) => [a.type, a.connectors.names()])), {
    speak: ['console', 'local_tts', 'mqtt', 'speechb_tts', 'speechlab_tts'],
    move: ['body', 'console', 'mqtt', 'serial'],
    face: ['console', 'mqtt', 'serial', 'unitree_led', 'websim'],
    remember_location: ['state_dir'],
    conversation: ['console', 'local_tts', 'speechlab_tts'],
    ros2_publish: ['ros2_topic'],
    navigate_location: ['nav2'],
    arm: ['console', 'unitree_arm'],
  });
  for (const [name, load] of Object.entries(builtinPlugins.loaders.inputs)) t.type(await load(), 'function', `input ${name}`);
  for (const [name, load] of Object.entries(builtinPlugins.loaders.llms)) t.type(await load(), 'function', `llm ${name}`);
  for (const [action, r] of Object.entries(builtinPlugins.loaders.connectors))
    for (const [name, load] of Object.entries(r)) t.type(await load(), 'function', `${action} ${name}`);
  t.type(await builtinPlugins.loaders.simulators.WebSim!(), 'function');
});

t.test('a registry whose descriptors and loaders disagree is refused, naming both sides', async (t) => {
  const { TextInput: _dropped, ...inputs } = builtinPlugins.loaders.inputs;
  t.throws(() => pluginRegistry(descriptors, { ...builtinPlugins.loaders, inputs: { ...inputs, Ghost: async () => () => ({}) as never } }), {
    message: /input TextInput has no loader; input loader Ghost has no descriptor/,
  });
});

t.test(
  'every move, navigation and arm connector is motion (the console too: the simulated robot obeys the governor as a real one would); nothing else is',
  async (t) => {
    const motion = descriptors.actions.all().flatMap((a) =>
      a.connectors
        .all()
        .filter((c) => c.motion)
        .map((c) => `${a.type}:${c.type}`),
    );
    t.same(motion, ['move:console', 'move:serial', 'move:mqtt', 'move:body', 'navigate_location:nav2', 'arm:console', 'arm:unitree_arm']);
  },
);

t.test('resolvePlugins loads exactly the plugins the default configuration uses', async (t) => {
  const loaded = await loadConfig({ name: 'default' }, { env: {} });
  const { registry, loaded: calls } = counted();
  const plugins = await resolvePlugins(registry, loaded.config);
  t.same([...calls].sort(), [
    'connector:face:console',
    'connector:move:console',
    'connector:speak:local_tts',
    'input:LocalVLMInput',
    'input:SpeechlabASRInput',
    'input:TextInput',
    'llm:CloudLLM',
    'simulator:WebSim',
  ]);
  t.equal(plugins.input('TextInput').description, descriptors.inputs.get('TextInput')!.description);
  t.type(plugins.input('TextInput').create, 'function');
  t.type(plugins.connector('speak', 'local_tts').create, 'function');
  t.equal(plugins.action('move').queue, 'latest');
  t.throws(() => plugins.input('VLMInput'), {
    name: 'PluginError',
    code: 'plugin_not_loaded',
    message: /input type "VLMInput" is not loaded.*\(loaded: LocalVLMInput, SpeechlabASRInput, TextInput\)/,
  });
  t.throws(() => plugins.input('NoSuchInput'), {
    code: 'plugin_unknown',
    message: /unknown input type "NoSuchInput"; known: BatteryInput, BodyInput, GpsInput, /,
  });
  t.throws(() => plugins.llm('GPT'), { code: 'plugin_unknown', message: /unknown llm type "GPT"; known: CloudLLM, LocalLLM, MultiLLM/ });
  t.throws(() => plugins.connector('move', 'serial'), {
    code: 'plugin_not_loaded',
    message: /connector "serial" of action "move" is not loaded.*\(loaded: console\)/,
  });
  t.throws(() => plugins.connector('move', 'teleport'), {
    code: 'plugin_unknown',
    message: /action move: unknown connector type "teleport"; known: body, console, mqtt, serial/,
  });
  t.throws(() => plugins.action('fly'), {
    code: 'plugin_unknown',
    message: /unknown action type "fly"; known: arm, conversation, face, move, navigate_location, remember_location, ros2_publish, speak/,
  });
  t.throws(() => plugins.simulator('Gazebo'), { code: 'plugin_unknown', message: /unknown simulator type "Gazebo"; known: WebSim/ });
});

t.test('remember_locations loads the implicit remember_location connector', async (t) => {
  const { registry, loaded } = counted();
  const plugins = await resolvePlugins(registry, { modes: { explore: mode({ remember_locations: true }) } });
  t.same(loaded, ['connector:remember_location:state_dir']);
  t.type(plugins.connector('remember_location', 'state_dir').create, 'function');
});

t.test('unknown names are refused together, before anything loads', async (t) => {
  const { registry, loaded } = counted();
  const err = await resolvePlugins(registry, {
    cortex_llm: { type: 'GPT' },
    modes: {
      a: mode({ agent_inputs: [{ type: 'TextInput' }, { type: 'Radar' }], agent_actions: [actionEntry('fly', 'console'), actionEntry('move', 'warp')] }),
    },
  }).catch((e: unknown) => e);
  t.ok(err instanceof PluginError);
  t.equal((err as PluginError).code, 'plugin_unknown');
  t.same((err as Error).message.split('\n'), [
    'unknown input type "Radar"; known: BatteryInput, BodyInput, GpsInput, LidarInput, LocalVLMInput, MqttInput, PresenceInput, Ros2TopicInput, SerialReader, SpeechbASRInput, SpeechlabASRInput, TextInput, VLMInput',
    'unknown llm type "GPT"; known: CloudLLM, LocalLLM, MultiLLM',
    'unknown action type "fly"; known: arm, conversation, face, move, navigate_location, remember_location, ros2_publish, speak',
    'action move: unknown connector type "warp"; known: body, console, mqtt, serial',
  ]);
  t.same(loaded, [], 'no plugin code was loaded');
});

t.test('plugins load in parallel, and a loader that fails names its plugin', async (t) => {
  // Each loader waits until both have started: sequential loading would never get past the first.
  let started = 0;
  let bothStarted!: () => void;
  const barrier = new Promise<void>((resolve) => (bothStarted = resolve));
  const waiting = (type: string) => ({
    type,
    description: type,
    schema: descriptors.inputs.get('TextInput')!.schema,
    needs: () => [],
    create: () => ({}) as never,
  });
  const registry = withPlugins(builtinPlugins, { inputs: [waiting('A'), waiting('B')] });
  const slow = pluginRegistry(registry.descriptors, {
    ...registry.loaders,
    inputs: {
      ...registry.loaders.inputs,
      A: async () => (++started === 2 && bothStarted(), await barrier, () => ({}) as never),
      B: async () => (++started === 2 && bothStarted(), await barrier, () => ({}) as never),
    },
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 10_000)));
  const result = await Promise.race([
    resolvePlugins(slow, { modes: { a: mode({ agent_inputs: [{ type: 'A' }, { type: 'B' }] }) } }).then(() => 'resolved'),
    timeout,
  ]);
  clearTimeout(timer);
  t.equal(result, 'resolved', 'both loaders ran at once');

  const broken = pluginRegistry(registry.descriptors, {
    ...registry.loaders,
    inputs: { ...registry.loaders.inputs, A: () => Promise.reject(new Error('libopencv.so.410: cannot open shared object file')) },
  });
  await t.rejects(resolvePlugins(broken, { modes: { a: mode({ agent_inputs: [{ type: 'A' }] }) } }), {
    name: 'PluginError',
    code: 'plugin_load_failed',
    message: 'input A: cannot load its code: libopencv.so.410: cannot open shared object file',
  });
});

t.test('withPlugins adds plugins to a new registry and refuses to replace one', async (t) => {
  const create = () => ({ name: 'beep', run: async () => {}, stop: async () => {} });
  const registry = withPlugins(builtinPlugins, {
    connectors: [
      { action: 'speak', type: 'beep', description: 'beeps', schema: descriptors.actions.get('speak')!.schema, needs: () => [], motion: false, create },
    ],
  });
  t.same(registry.descriptors.actions.get('speak')!.connectors.names(), ['beep', 'console', 'local_tts', 'mqtt', 'speechb_tts', 'speechlab_tts']);
  t.same(
    builtinPlugins.descriptors.actions.get('speak')!.connectors.names(),
    ['console', 'local_tts', 'mqtt', 'speechb_tts', 'speechlab_tts'],
    'the built-in registry is unchanged',
  );
  const plugins = await resolvePlugins(registry, { modes: { a: mode({ agent_actions: [actionEntry('speak', 'beep')] }) } });
  t.equal(plugins.connector('speak', 'beep').create, create);
  t.throws(
    () =>
      withPlugins(builtinPlugins, {
        llms: [{ type: 'CloudLLM', description: 'x', schema: descriptors.llms.get('CloudLLM')!.schema, needs: () => [], create: () => ({}) as never }],
      }),
    /duplicate llm plugin type: CloudLLM/,
  );
});
