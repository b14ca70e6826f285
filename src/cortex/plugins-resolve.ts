// Pairs descriptors with loaders, and loads exactly the plugins a configuration uses (in parallel) into synchronous lookups.
import type { ConnectorFactory } from './action.js';
import { describeError, PluginError } from '../errors.js';
import { Registry } from '../plugins/registry.js';
import { usedPlugins, type PluginUse } from '../config/used-plugins.js';
import type { ActionDescriptor, ConnectorDescriptor, Descriptor, PluginDescriptors } from '../plugins/types.js';
import type { ConnectorSpec, InputSpec, LlmSpec, Loader, PluginLoaders, PluginRegistry, Plugins, SimulatorSpec } from './plugins.js';

/**
 * A registry whose descriptors and loaders name the same plugins. Throws (a programming error, found
 * by the first test that builds it) listing every descriptor without a loader and loader without a descriptor.
 */
export function pluginRegistry(descriptors: PluginDescriptors, loaders: PluginLoaders): PluginRegistry {
  const problems: string[] = [];
  const pair = (what: string, described: string[], loaded: string[]) => {
    for (const n of described) if (!loaded.includes(n)) problems.push(`${what} ${n} has no loader`);
    for (const n of loaded) if (!described.includes(n)) problems.push(`${what} loader ${n} has no descriptor`);
  };
  pair('input', descriptors.inputs.names(), Object.keys(loaders.inputs));
  pair('llm', descriptors.llms.names(), Object.keys(loaders.llms));
  pair('simulator', descriptors.simulators.names(), Object.keys(loaders.simulators));
  pair('action', descriptors.actions.names(), Object.keys(loaders.connectors));
  for (const action of descriptors.actions.all())
    pair(`connector of ${action.type}:`, action.connectors.names(), Object.keys(loaders.connectors[action.type] ?? {}));
  if (problems.length) throw new Error(`plugin registry: ${problems.join('; ')}`);
  return { descriptors, loaders };
}

/** Plugins added to a registry (tests add scripted models, inputs and connectors this way), already loaded. */
export interface ExtraPlugins {
  inputs?: InputSpec[];
  llms?: LlmSpec[];
  simulators?: SimulatorSpec[];
  /** Connectors added to actions the registry knows. */
  connectors?: Array<ConnectorSpec & { action: string }>;
}

const descriptorOf = <D extends Descriptor>(spec: D & { create: unknown }): D => {
  const { create: _code, ...rest } = spec;
  return rest as unknown as D;
};
const loaderOf =
  <F>(create: F): Loader<F> =>
  async () =>
    create;

/** A new registry: `base` plus `extra` (a name already in `base` is refused, so nothing is replaced silently). */
export function withPlugins(base: PluginRegistry, extra: ExtraPlugins): PluginRegistry {
  const d = base.descriptors;
  const l = base.loaders;
  const connectorsOf = (action: ActionDescriptor): ActionDescriptor => {
    const added = (extra.connectors ?? []).filter((c) => c.action === action.type);
    if (!added.length) return action;
    return {
      ...action,
      connectors: new Registry<ConnectorDescriptor>('connector', [...action.connectors.all(), ...added.map(({ action: _a, ...c }) => descriptorOf(c))]),
    };
  };
  for (const c of extra.connectors ?? [])
    if (!d.actions.has(c.action)) throw new Error(`withPlugins: connector ${c.type} for ${d.actions.unknownMessage(c.action)}`);
  const connectorLoaders: PluginLoaders['connectors'] = {};
  for (const [action, loaders] of Object.entries(l.connectors)) connectorLoaders[action] = { ...loaders };
  for (const c of extra.connectors ?? []) connectorLoaders[c.action]![c.type] = loaderOf<ConnectorFactory>(c.create);
  return pluginRegistry(
    {
      inputs: new Registry('input', [...d.inputs.all(), ...(extra.inputs ?? []).map(descriptorOf)]),
      llms: new Registry('llm', [...d.llms.all(), ...(extra.llms ?? []).map(descriptorOf)]),
      simulators: new Registry('simulator', [...d.simulators.all(), ...(extra.simulators ?? []).map(descriptorOf)]),
      actions: new Registry('action', d.actions.all().map(connectorsOf)),
    },
    {
      inputs: { ...l.inputs, ...Object.fromEntries((extra.inputs ?? []).map((s) => [s.type, loaderOf(s.create)])) },
      llms: { ...l.llms, ...Object.fromEntries((extra.llms ?? []).map((s) => [s.type, loaderOf(s.create)])) },
      simulators: { ...l.simulators, ...Object.fromEntries((extra.simulators ?? []).map((s) => [s.type, loaderOf(s.create)])) },
      connectors: connectorLoaders,
    },
  );
}

async function load<F>(what: string, loader: Loader<F>): Promise<F> {
  try {
    return await loader();
  } catch (err) {
    throw new PluginError('plugin_load_failed', `${what}: cannot load its code: ${describeError(err)}`, { cause: err });
  }
}

function notLoaded(kind: string, name: string, loaded: Iterable<string>): PluginError {
  const names = [...loaded].sort();
  return new PluginError(
    'plugin_not_loaded',
    `${kind} "${name}" is not loaded: the configuration given to resolvePlugins does not use it (loaded: ${names.length ? names.join(', ') : 'none'})`,
  );
}

/**
 * Loads the code of exactly the plugins `config` uses, all at once, and returns synchronous lookups.
 * Rejects with one PluginError listing every unknown name (with the known names), or naming the first
 * plugin whose code failed to load.
 */
export async function resolvePlugins(registry: PluginRegistry, config: PluginUse): Promise<Plugins> {
  const { descriptors: d, loaders: l } = registry;
  const used = usedPlugins(config);
  const unknown: string[] = [];
  for (const t of used.inputs) if (!d.inputs.has(t)) unknown.push(d.inputs.unknownMessage(t));
  for (const t of used.llms) if (!d.llms.has(t)) unknown.push(d.llms.unknownMessage(t));
  for (const t of used.simulators) if (!d.simulators.has(t)) unknown.push(d.simulators.unknownMessage(t));
  for (const [name, connectors] of used.actions) {
    const action = d.actions.get(name);
    if (!action) unknown.push(d.actions.unknownMessage(name));
    else for (const c of connectors) if (!action.connectors.has(c)) unknown.push(`action ${name}: ${action.connectors.unknownMessage(c)}`);
  }
  if (unknown.length) throw new PluginError('plugin_unknown', unknown.join('\n'));

  const inputs = new Map<string, InputSpec>();
  const llms = new Map<string, LlmSpec>();
  const simulators = new Map<string, SimulatorSpec>();
  const connectors = new Map<string, ConnectorSpec>();
  const key = (action: string, connector: string) => `${action}\u0000${connector}`;
  await Promise.all([
    ...used.inputs.map(async (t) => inputs.set(t, { ...d.inputs.get(t)!, create: await load(`input ${t}`, l.inputs[t]!) })),
    ...used.llms.map(async (t) => llms.set(t, { ...d.llms.get(t)!, create: await load(`llm ${t}`, l.llms[t]!) })),
    ...used.simulators.map(async (t) => simulators.set(t, { ...d.simulators.get(t)!, create: await load(`simulator ${t}`, l.simulators[t]!) })),
    ...[...used.actions].flatMap(([name, list]) =>
      list.map(async (c) => {
        const descriptor = d.actions.get(name)!.connectors.get(c)!;
        connectors.set(key(name, c), { ...descriptor, create: await load(`connector ${c} of ${name}`, l.connectors[name]![c]!) });
      }),
    ),
  ]);

  const lookup =
    <S>(kind: 'input' | 'llm' | 'simulator', loaded: Map<string, S>, table: Registry<Descriptor>) =>
    (type: string): S => {
      const spec = loaded.get(type);
      if (spec) return spec;
      throw table.has(type) ? notLoaded(`${kind} type`, type, loaded.keys()) : new PluginError('plugin_unknown', table.unknownMessage(type));
    };
  const plugins: Plugins = {
    descriptors: d,
    input: lookup('input', inputs, d.inputs),
    llm: lookup('llm', llms, d.llms),
    simulator: lookup('simulator', simulators, d.simulators),
    action(name) {
      const action = d.actions.get(name);
      if (!action) throw new PluginError('plugin_unknown', d.actions.unknownMessage(name));
      return action;
    },
    connector(name, connector) {
      const spec = connectors.get(key(name, connector));
      if (spec) return spec;
      const action = plugins.action(name);
      if (!action.connectors.has(connector)) throw new PluginError('plugin_unknown', `action ${name}: ${action.connectors.unknownMessage(connector)}`);
      throw notLoaded(
        `connector "${connector}" of action`,
        name,
        [...connectors.keys()].filter((k) => k.startsWith(`${name}\u0000`)).map((k) => k.split('\u0000')[1]!),
      );
    },
  };
  return plugins;
}
