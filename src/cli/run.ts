// `cortexd run NAME`: loads a configuration, connects the service, runs the agent until a signal or --for, and stops it gracefully.
import type { Command } from 'commander';
import type { ServiceConnection } from '../cortex/embedded.js';
import type { LoadedConfig } from '../config/schema.js';
import { ConfigError, CortexError, describeError, formatIssue } from '../errors.js';
import type { CommandResult } from '../fleet/execute.js';
import type { Logger } from '../log.js';
import type { Plugins } from '../plugins/types.js';
import { EXIT, errLine, oneLine, warnLine } from './output.js';

/** Everything a run needs, loaded when `cortexd run` runs (the agent and its plugins live in actors/, above src/). */
async function loadRunModules() {
  const [agent, inspect, plugins, load, embedded, events, log, metrics, feed, notify, watchdog, view] = await Promise.all([
    import('../../actors/agent.js'),
    import('../../actors/modes/inspect.js'),
    import('../../actors/plugins.js'),
    import('../config/load.js'),
    import('../cortex/embedded.js'),
    import('../cortex/events.js'),
    import('../log.js'),
    import('../metrics.js'),
    import('../metrics-feed.js'),
    import('../systemd/notify.js'),
    import('../systemd/watchdog.js'),
    import('./view.js'),
  ]);
  return { ...agent, ...inspect, ...plugins, ...load, ...embedded, ...events, ...log, ...metrics, ...feed, ...notify, ...watchdog, ...view };
}

/** Parses `500ms`, `30s`, `2m`, `1h` or a bare number of seconds into milliseconds. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text);
  if (!m) throw new CortexError('bad_duration', `not a duration: "${text}" (examples: 500ms, 30s, 2m, 1h)`);
  const n = Number(m[1]);
  const unit = (m[2] ?? 's').toLowerCase();
  const ms = n * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000);
  if (!(ms > 0)) throw new CortexError('bad_duration', `duration must be positive: "${text}"`);
  return ms;
}

export interface RunOptions {
  config?: string;
  for?: string;
  events?: boolean;
  inspect?: string | boolean;
}

/** Closes what run opened, in order, each bounded so a stuck close cannot hold the exit. */
async function bounded(what: string, p: Promise<unknown>, ms: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(() => (logger.warn(`${what}: still closing after ${ms} ms, going on`), resolve()), ms)));
  try {
    await Promise.race([p.catch((err) => logger.warn(`${what}: ${describeError(err)}`)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs an agent to its end; resolves with the exit code. */
export async function runAgent(name: string | undefined, opts: RunOptions): Promise<number> {
  const forMs = opts.for !== undefined ? parseDuration(opts.for) : undefined;
  const {
    Agent,
    AgentBus,
    Metrics,
    MetricsServer,
    Notifier,
    TerminalView,
    Watchdog,
    attachEventLines,
    builtinPlugins,
    connectService,
    createLogger,
    createModeInspector,
    feedMetrics,
    loadConfig,
    metricsOptionsFromEnv,
    resolvePlugins,
    setLogger,
  } = await loadRunModules();
  const viewOn = !opts.events;
  // On a terminal the view shows what matters; logs below warnings would only repeat it.
  const logger = createLogger(viewOn && process.stdout.isTTY && !process.env.CORTEX_LOG_LEVEL && !process.env.LOG_LEVEL ? { level: 'warn' } : {});
  setLogger(logger);
  const loaded = await loadConfig(opts.config ? { file: opts.config } : { name });
  for (const w of loaded.warnings) warnLine(w);
  // The code of exactly the plugins this configuration uses, loaded before anything starts.
  const plugins = await resolvePlugins(builtinPlugins, loaded.config);

  const notifier = new Notifier({ onError: (m) => logger.warn(m) });
  const metrics = new Metrics();
  const metricsOptions = metricsOptionsFromEnv();
  const metricsServer = metricsOptions ? new MetricsServer(metrics, metricsOptions) : undefined;
  if (metricsServer) {
    const at = await metricsServer.start();
    logger.info(`metrics on ${at.url}`);
  }

  let service: ServiceConnection;
  try {
    service = await connectService(loaded, { logger });
  } catch (err) {
    await metricsServer?.stop();
    throw new CortexError('service', `cannot start the service: ${describeError(err)}`);
  }
  // What the service connection depends on: a reloaded configuration that changes it gets a new one.
  const serviceKey = (l: LoadedConfig) => JSON.stringify([l.configName, l.addresses, l.apiKey]);
  let serviceFor = serviceKey(loaded);

  const bus = new AgentBus();
  const displayNamesOf = (l: LoadedConfig) => Object.fromEntries(Object.entries(l.config.modes).map(([k, m]) => [k, m.display_name]));
  const displayNames = displayNamesOf(loaded);
  const view = viewOn ? new TerminalView({ displayNames }).attach(bus) : undefined;
  const eventLines = opts.events ? attachEventLines(bus) : undefined;
  const inspector = opts.inspect ? createModeInspector(typeof opts.inspect === 'string' ? { url: opts.inspect } : {}) : undefined;

  let lastTick = Date.now();
  let periodMs = 1000 / loaded.config.modes[loaded.config.default_mode]!.hertz;
  const watchdog = new Watchdog(notifier, { healthy: () => Date.now() - lastTick < Math.max(3 * periodMs, 10_000) });
  let ready = false;

  // The running generation: a fleet `reload` replaces it with another configuration in this process.
  let current: { loaded: LoadedConfig; plugins: Plugins; agent: InstanceType<typeof Agent>; ticked: boolean };
  const makeAgent = (l: LoadedConfig, p: Plugins) =>
    new Agent({
      loaded: l,
      plugins: p,
      cloud: service.cloud,
      bus,
      logger,
      write: view ? (line) => view.consoleLine(line) : () => {},
      ...(inspector ? { inspect: inspector.inspect } : {}),
      fleet: { reload: (text, origin) => reload(text, origin) },
      onTick: (mode, report) => {
        lastTick = Date.now();
        current.ticked = true;
        if (!ready) {
          ready = true;
          void notifier.ready(`mode ${mode}`);
          watchdog.start();
        }
      },
    });

  // --- fleet reload (issue 18): a pushed configuration is checked like `cortexd check` (same loader, same
  // file path, so ${CONFIG_DIR} is the same); invalid, the robot keeps the running one and the reply
  // carries the check's lines; valid, the running agent stops (its shutdown hooks run) and a new one
  // starts with it in this process. Nothing is written to disk: the next start reads the file again.
  let pending: { loaded: LoadedConfig; plugins: Plugins; origin: string } | undefined;
  let ending = false;
  const reload = async (text: string, origin: string): Promise<CommandResult> => {
    if (ending) return { ok: false, reason: 'the agent is stopping' };
    if (pending) return { ok: false, reason: 'a reload is already in progress' };
    const running = current.loaded;
    let next: LoadedConfig;
    try {
      next = await loadConfig({ file: running.file, text });
    } catch (err) {
      if (!(err instanceof ConfigError)) return { ok: false, reason: `the new configuration was not loaded: ${describeError(err)}; ${running.configName} keeps running` };
      const n = err.issues.length;
      return {
        ok: false,
        reason: `the new configuration is invalid (${n} problem${n === 1 ? '' : 's'}); ${running.configName} keeps running`,
        lines: err.issues.map((i) => oneLine(formatIssue(i))),
      };
    }
    let nextPlugins: Plugins;
    try {
      nextPlugins = await resolvePlugins(builtinPlugins, next.config);
    } catch (err) {
      return { ok: false, reason: `the new configuration's plugins did not load: ${describeError(err)}; ${running.configName} keeps running` };
    }
    if (ending || pending) return { ok: false, reason: ending ? 'the agent is stopping' : 'a reload is already in progress' };
    pending = { loaded: next, plugins: nextPlugins, origin };
    for (const w of next.warnings) logger.warn(w);
    // After this answer is on its way: the channel replies before the stop reaches it.
    setImmediate(() => current.agent.stop(`reload (${origin})`));
    return { ok: true, reason: `valid; restarting the agent with it (sha256 ${next.sha256 ?? '?'})`, ...(next.warnings.length > 0 ? { lines: next.warnings.map(oneLine) } : {}) };
  };
  // --- end fleet reload

  current = { loaded, plugins, agent: makeAgent(loaded, plugins), ticked: false };
  const metricsSub = feedMetrics(bus, metrics, {
    hertzOf: (mode) => current.loaded.config.modes[mode]?.hertz ?? 1,
    modelOf: (mode) => current.loaded.config.modes[mode]?.cortex_llm.type,
  });
  const busSub = bus.events$.subscribe((e) => {
    if (e.type === 'mode.changed') {
      periodMs = 1000 / (current.loaded.config.modes[e.to]?.hertz ?? 1);
      lastTick = Date.now();
      void notifier.status(`mode ${e.to}`);
    }
  });

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      errLine(`cortexd: second ${signal}, exiting now`);
      process.exit(130);
    }
    ending = true;
    void notifier.stopping(`stopping on ${signal}`);
    current.agent.stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const forTimer =
    forMs !== undefined ? setTimeout(() => ((ending = true), void notifier.stopping('stopping: --for elapsed'), current.agent.stop(`ran for ${opts.for}`)), forMs) : undefined;

  current.agent.start();
  let outcome = await current.agent.done;
  // --- fleet reload: the next generation, or the previous one again when the new one failed to start.
  let fallback: { loaded: LoadedConfig; plugins: Plugins; origin: string } | undefined;
  for (;;) {
    const failedStart = outcome.code !== 0 && !current.ticked && fallback !== undefined;
    const next = ending ? undefined : (pending ?? (failedStart ? fallback : undefined));
    if (!next) break;
    if (failedStart && !pending) {
      logger.error(`reload: the new configuration did not start (${outcome.reason ?? 'failed'}); running ${next.loaded.configName} as before`);
      bus.emit({ type: 'error', at: Date.now(), source: 'reload', message: `the new configuration did not start: ${outcome.reason ?? 'failed'}; the previous one runs again` });
    }
    fallback = pending ? { loaded: current.loaded, plugins: current.plugins, origin: 'fallback' } : undefined;
    pending = undefined;
    if (serviceKey(next.loaded) !== serviceFor) {
      await bounded('service', service.close(), 2000, logger);
      try {
        service = await connectService(next.loaded, { logger });
        serviceFor = serviceKey(next.loaded);
      } catch (err) {
        outcome = { code: 1, reason: `cannot start the service: ${describeError(err)}`, mode: outcome.mode };
        break;
      }
    }
    for (const w of next.loaded.warnings) warnLine(w);
    Object.assign(displayNames, displayNamesOf(next.loaded));
    periodMs = 1000 / next.loaded.config.modes[next.loaded.config.default_mode]!.hertz;
    lastTick = Date.now();
    current = { loaded: next.loaded, plugins: next.plugins, agent: makeAgent(next.loaded, next.plugins), ticked: false };
    current.agent.start();
    outcome = await current.agent.done;
  }
  // --- end fleet reload

  clearTimeout(forTimer);
  watchdog.stop();
  busSub.unsubscribe();
  metricsSub.unsubscribe();
  await bounded('service', service.close(), 2000, logger);
  if (metricsServer) await bounded('metrics', metricsServer.stop(), 1000, logger);
  if (inspector) inspector.stop();
  view?.detach();
  eventLines?.unsubscribe();
  bus.complete();
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  if (outcome.code !== 0) {
    errLine(`cortexd: ${outcome.reason ?? 'the agent failed'}`);
    return EXIT.failure;
  }
  return EXIT.ok;
}

export function register(program: Command): void {
  program
    .command('run')
    .description('run an agent: config/NAME.json5 (or CONFIG=NAME), until SIGTERM/SIGINT or --for')
    .argument('[name]', 'configuration name (default: $CONFIG)')
    .option('--config <path>', 'run the configuration file at PATH')
    .option('--for <duration>', 'stop (as on SIGTERM) after this long: 500ms, 30s, 2m, 1h')
    .option('--events', 'print one JSON line per agent event on stdout instead of the terminal view')
    .option('--inspect [url]', 'send the statecharts to the Stately inspector (default ws://localhost:8080)')
    .action(async (name: string | undefined, opts: RunOptions) => {
      const code = await runAgent(name, opts);
      process.exitCode = code;
      // Whatever a plugin may still hold (stdin, a socket), the process ends shortly after a finished run.
      setTimeout(() => process.exit(code), 1000).unref();
    });
}
