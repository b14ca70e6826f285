// `cortexd run NAME`: loads a configuration, connects the service, runs the agent until a signal or --for, and stops it gracefully.
import { createConnection } from 'node:net';
import { InvalidArgumentError, type Command } from 'commander';
import type { ServiceConnection } from '../cortex/embedded.js';
import { CortexError, describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ModeMemoryStore } from '../modes/memory.js';
import { EXIT, errLine, warnLine } from './output.js';

/** Everything a run needs, loaded when `cortexd run` runs (the agent and its plugins live in actors/, above src/). */
async function loadRunModules() {
  const [agent, inspect, plugins, load, embedded, events, log, metrics, feed, notify, watchdog, view, memory, paths] = await Promise.all([
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
    import('../modes/memory.js'),
    import('../paths.js'),
  ]);
  return { ...agent, ...inspect, ...plugins, ...load, ...embedded, ...events, ...log, ...metrics, ...feed, ...notify, ...watchdog, ...view, ...memory, ...paths };
}

/** Parses `500ms`, `30s`, `2m`, `1h` or a bare number of seconds into milliseconds; a bad one is a usage error (exit 2). */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text);
  if (!m) throw new InvalidArgumentError(`not a duration: "${text}" (examples: 500ms, 30s, 2m, 1h)`);
  const n = Number(m[1]);
  const unit = (m[2] ?? 's').toLowerCase();
  const ms = n * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000);
  if (!(ms > 0)) throw new InvalidArgumentError(`duration must be positive: "${text}"`);
  return ms;
}

/** True when something accepts TCP connections at the host and port of `url` (within 1 s). */
function listening(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve(false);
    }
    const port = Number(u.port || (u.protocol === 'wss:' ? 443 : 80));
    const socket = createConnection({ host: u.hostname.replace(/^\[|\]$/g, ''), port, timeout: 1000 });
    const done = (ok: boolean) => (socket.destroy(), resolve(ok));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

export interface RunOptions {
  config?: string;
  /** Milliseconds (commander parses `--for` with parseDuration). */
  for?: number;
  /** Start in the default mode, not the one mode memory saved. */
  fresh?: boolean;
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
  const forMs = opts.for;
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
    fileModeMemory,
    loadConfig,
    metricsOptionsFromEnv,
    modeMemoryPath,
    resolvePlugins,
    setLogger,
    speechFacts,
    stateDir,
  } = await loadRunModules();
  const viewOn = !opts.events;
  const tty = viewOn && Boolean(process.stdout.isTTY);
  const view = viewOn ? new TerminalView() : undefined;
  // On a terminal the view shows what matters and the log's warnings among its lines (each kind once
  // in a while); logs below warnings would only repeat it. Elsewhere the log is JSON lines on stderr.
  const level = process.env.CORTEX_LOG_LEVEL ?? process.env.LOG_LEVEL;
  const logger = createLogger(tty ? { level: level ?? 'warn', destination: view!.logDestination() } : {});
  setLogger(logger);
  const loaded = await loadConfig(opts.config ? { file: opts.config } : { name });
  for (const w of loaded.warnings) warnLine(w);
  const config = loaded.config;
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

  const bus = new AgentBus();
  // Mode memory, read through this store so the view can say that the start mode was restored; --fresh ignores it.
  let restoredMode: string | undefined;
  const memoryFile = config.mode_memory_enabled ? fileModeMemory(modeMemoryPath(loaded.configName, stateDir()), (m) => logger.warn(m)) : undefined;
  const memory: ModeMemoryStore | false = memoryFile
    ? {
        load: () => {
          if (opts.fresh) return {};
          const read = memoryFile.load();
          restoredMode = read.memory?.current;
          return read;
        },
        save: (m) => memoryFile.save(m),
      }
    : false;
  const eventLines = opts.events ? attachEventLines(bus) : undefined;
  const inspectUrl = opts.inspect ? (typeof opts.inspect === 'string' ? opts.inspect : 'ws://localhost:8080') : undefined;
  if (inspectUrl) {
    if (await listening(inspectUrl)) errLine(`cortexd: --inspect: sending the statecharts to ${inspectUrl}`);
    else errLine(`cortexd: --inspect: nothing listens at ${inspectUrl} yet; the statecharts are sent once something does (retried every 5 s; see the README, "Inspecting a run")`);
  }
  const inspector = inspectUrl ? createModeInspector({ url: inspectUrl }) : undefined;

  let lastTick = Date.now();
  let periodMs = 1000 / loaded.config.modes[loaded.config.default_mode]!.hertz;
  const watchdog = new Watchdog(notifier, { healthy: () => Date.now() - lastTick < Math.max(3 * periodMs, 10_000) });
  let ready = false;

  const agent = new Agent({
    loaded,
    plugins,
    cloud: service.cloud,
    bus,
    logger,
    memory,
    write: view ? (line) => view.consoleLine(line) : () => {},
    ...(inspector ? { inspect: inspector.inspect } : {}),
    onTick: (mode, report) => {
      lastTick = Date.now();
      if (!ready) {
        ready = true;
        void notifier.ready(`mode ${mode}`);
        watchdog.start();
      }
    },
  });
  if (view) {
    const startMode = restoredMode !== undefined && Object.hasOwn(config.modes, restoredMode) ? restoredMode : config.default_mode;
    const typedInputs = (mode: string) => config.modes[mode]?.agent_inputs.some((i) => plugins.descriptors.inputs.get(i.type)?.typedText === true) ?? false;
    view.configure({
      displayNames: Object.fromEntries(Object.entries(config.modes).map(([k, m]) => [k, m.display_name])),
      ...speechFacts(config),
      defaultMode: config.default_mode,
      ...(restoredMode !== undefined ? { restoredMode } : {}),
      freshCommand: `cortexd run ${opts.config ? `--config ${opts.config}` : loaded.configName} --fresh`,
      typed: typedInputs(startMode),
    });
    view.attach(bus);
  }
  const metricsSub = feedMetrics(bus, metrics, {
    hertzOf: (mode) => loaded.config.modes[mode]?.hertz ?? 1,
    modelOf: (mode) => loaded.config.modes[mode]?.cortex_llm.type,
  });
  const busSub = bus.events$.subscribe((e) => {
    if (e.type === 'mode.changed') {
      periodMs = 1000 / (loaded.config.modes[e.to]?.hertz ?? 1);
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
    void notifier.stopping(`stopping on ${signal}`);
    agent.stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const forTimer = forMs !== undefined ? setTimeout(() => (void notifier.stopping('stopping: --for elapsed'), agent.stop(`ran for ${forMs / 1000} s`)), forMs) : undefined;

  agent.start();
  const outcome = await agent.done;

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
    .option('--for <duration>', 'stop (as on SIGTERM) after this long: 500ms, 30s, 2m, 1h', parseDuration)
    .option('--fresh', 'start in the default mode, not in the mode remembered from the last run')
    .option('--events', 'print one JSON line per agent event on stdout instead of the terminal view')
    .option('--inspect [url]', 'send the statecharts to the Stately inspector (default ws://localhost:8080)')
    .action(async (name: string | undefined, opts: RunOptions) => {
      const code = await runAgent(name, opts);
      process.exitCode = code;
      // Whatever a plugin may still hold (stdin, a socket), the process ends shortly after a finished run.
      setTimeout(() => process.exit(code), 1000).unref();
    });
}
