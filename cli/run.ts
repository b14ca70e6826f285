// `cortexd run NAME`: loads a configuration, starts the process root (service, watchdog, signals, agent) until a signal or --for, and stops it gracefully.
import { fstatSync } from 'node:fs';
import { createConnection } from 'node:net';
import { hooksDirFor } from '../src/paths.js';
import { InvalidArgumentError, type Command } from 'commander';
import type { LoadedConfig } from '../src/config/schema.js';
import type { AgentBus } from '../src/cortex/events.js';
import type { FleetTrust } from '../src/fleet/trust.js';
import { CortexError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import type { ModeMemoryStore } from '../src/modes/memory.js';
import type { Plugins } from '../src/cortex/plugins.js';
import type { ProcessDeps, ProcessHandle, ProcessOutcome } from '../actors/process/process.js';
import { EXIT, errLine, warnLine } from './output.js';
import { startRunCapture } from './run-capture.js';
import type { RunOptions } from './run-options.js';
import { configReloader, watchConfigFile, type Reload } from './run-reload.js';
import type { TerminalView } from './view.js';

export type { RunOptions };

/** Everything a run needs, loaded when `cortexd run` runs (the agent and its plugins live in actors/, above src/). */
async function loadRunModules() {
  const [agent, plugins, load, embedded, events, log, notify, proc, view, memory, paths, reloadPolicy, watch] = await Promise.all([
    import('../actors/agent/agent.js'),
    import('../actors/plugin-registry.js'),
    import('../src/config/load.js'),
    import('../src/cortex/embedded.js'),
    import('../src/cortex/events.js'),
    import('../src/log.js'),
    import('../src/systemd/notify.js'),
    import('../actors/process/process.js'),
    import('./view.js'),
    import('../src/modes/memory.js'),
    import('../src/paths.js'),
    import('../src/fleet/reload.js'),
    import('../src/config/watch.js'),
  ]);
  const { canPlaySound } = await import('../src/sound-output.js');
  const { join } = await import('node:path');
  return {
    ...agent,
    ...plugins,
    ...load,
    ...embedded,
    ...events,
    ...log,
    ...notify,
    ...proc,
    ...view,
    ...memory,
    ...paths,
    ...reloadPolicy,
    ...watch,
    canPlaySound,
    join,
  };
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

/** A positive number option (`--record-keep 3`); anything else is a usage error. */
function positiveNumber(text: string): number {
  const n = Number(text);
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError(`not a positive number: "${text}"`);
  return n;
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

/**
 * True when stderr is systemd's journal stream (JOURNAL_STREAM names its device and inode, as
 * systemd.exec(5) says to check): the service's output is the JSON log, which journalctl keeps.
 */
function toJournal(): boolean {
  const stream = process.env.JOURNAL_STREAM;
  if (!stream || process.stdout.isTTY) return false;
  try {
    const s = fstatSync(2);
    return stream === `${s.dev}:${s.ino}`;
  } catch {
    return false;
  }
}

type RunModules = Awaited<ReturnType<typeof loadRunModules>>;

/**
 * One form of output, never both: the view (a terminal, or its output redirected to a file or a pipe)
 * with the log's warnings among its lines, or the JSON log (under systemd's journal, and with --events,
 * whose stdout is JSON events). Logs below warnings would only repeat the view. A recording (--record,
 * --foxglove) gets every log line too, once it has started (`tapLog`).
 */
function startOutput(m: RunModules, opts: RunOptions) {
  const view = !opts.events && !toJournal() ? new m.TerminalView() : undefined;
  const level = m.envLogLevel();
  let logTap: ((line: string) => void) | undefined;
  const tee = (line: string) => logTap?.(line);
  const logger = m.createLogger(view ? { level: level ?? 'warn', destination: view.logDestination(), tee } : { tee });
  m.setLogger(logger);
  const tapLog = (tap: (line: string) => void) => {
    logTap = tap;
  };
  return { view, logger, tapLog };
}

/**
 * The metrics endpoint, started. Metrics are read only through it: without CORTEX_METRICS_PORT, prom-client
 * (with @opentelemetry/api, about 85 modules) is not loaded and nothing records them (the first tick stays short).
 */
async function startMetrics(logger: Logger) {
  if (!process.env.CORTEX_METRICS_PORT?.trim()) return undefined;
  const code = { ...(await import('../src/metrics/prometheus.js')), ...(await import('../src/metrics/feed.js')) };
  const options = code.metricsOptionsFromEnv();
  if (!options) return undefined;
  const metrics = new code.Metrics();
  const server = new code.MetricsServer(metrics, options);
  const at = await server.start();
  logger.info(`metrics on ${at.url}`);
  /** Records the bus's events; a mode's hertz and model are asked of the running generation. */
  const feed = (bus: AgentBus, proc: ProcessHandle) =>
    code.feedMetrics(bus, metrics, {
      hertzOf: (mode) => proc.config().modes[mode]?.hertz ?? 1,
      modelOf: (mode) => proc.config().modes[mode]?.cortex_llm.type,
    });
  return { server, feed };
}

/** --inspect: the statecharts go to the Stately inspector (@statelyai/inspect, 80 ms of CPU to load, only when asked for). */
async function startInspector(opts: RunOptions) {
  if (!opts.inspect) return undefined;
  const url = typeof opts.inspect === 'string' ? opts.inspect : 'ws://localhost:8080';
  if (await listening(url)) errLine(`cortexd: --inspect: sending the statecharts to ${url}`);
  else
    errLine(
      `cortexd: --inspect: nothing listens at ${url} yet; the statecharts are sent once something does (retried every 5 s; see docs/running.md, "Inspecting a run")`,
    );
  return (await import('../actors/modes/inspect.js')).createModeInspector({ url });
}

/**
 * Mode memory, read through this store so the view can say that the start mode was restored; --fresh
 * ignores it at start (a configuration the fleet reloads starts where its memory says).
 */
function modeMemories(m: RunModules, opts: RunOptions, logger: Logger) {
  let restoredMode: string | undefined;
  const of = (l: LoadedConfig, first: boolean): ModeMemoryStore | false => {
    const file = l.config.mode_memory_enabled ? m.fileModeMemory(m.modeMemoryPath(l.configName, m.stateDir()), (w) => logger.warn(w)) : undefined;
    if (!file) return false;
    return {
      load: () => {
        if (first && opts.fresh) return {};
        const read = file.load();
        if (first) restoredMode = read.memory?.current;
        return read;
      },
      save: (memory) => file.save(memory),
    };
  };
  return { of, restored: () => restoredMode };
}

/** What the terminal view says of a configuration: mode names, where speech goes, the start mode. */
function viewConfigurer(m: RunModules, view: TerminalView | undefined, opts: RunOptions, restored: () => string | undefined) {
  // Whether a player can play here: the start says where speech really goes (no sound card: files).
  const soundCard = m.canPlaySound();
  return (l: LoadedConfig, p: Plugins, first: boolean) => {
    const c = l.config;
    const restoredMode = first ? restored() : undefined;
    const startMode = restoredMode !== undefined && Object.hasOwn(c.modes, restoredMode) ? restoredMode : c.default_mode;
    const typed = c.modes[startMode]?.agent_inputs.some((i) => p.descriptors.inputs.get(i.type)?.typedText === true) ?? false;
    view?.configure({
      displayNames: Object.fromEntries(Object.entries(c.modes).map(([k, mode]) => [k, mode.display_name])),
      ...m.speechFacts(c, { card: soundCard, fallbackDir: m.join(m.stateDir(), 'speech') }),
      ...m.replayFacts(c),
      defaultMode: c.default_mode,
      ...(restoredMode !== undefined ? { restoredMode } : {}),
      freshCommand: `cortexd run ${opts.config ? `--config ${opts.config}` : l.configName} --fresh`,
      typed,
    });
  };
}

/** What the supervisor is given of the run: the first configuration and everything its agents share. */
interface SupervisorParts {
  loaded: LoadedConfig;
  plugins: Plugins;
  bus: AgentBus;
  logger: Logger;
  view: TerminalView | undefined;
  capture: Awaited<ReturnType<typeof startRunCapture>> | undefined;
  trust: FleetTrust | undefined;
  memory: ReturnType<typeof modeMemories>;
  metricsServer: { stop(): Promise<unknown> } | undefined;
  inspector: { inspect: NonNullable<ProcessDeps['inspect']> } | undefined;
  /** A fleet command's reload, defined once the supervisor exists. */
  reload: Reload;
}

/**
 * The supervisor: the process root (actors/process/process.ts) with signals, sd_notify and the watchdog, the
 * service, and the agent subtree, which a reload replaces under the same root.
 */
async function startSupervisor(m: RunModules, opts: RunOptions, parts: SupervisorParts): Promise<ProcessHandle> {
  const { loaded, plugins, bus, logger, view, capture, trust, memory, metricsServer, inspector, reload } = parts;
  const notifier = new m.Notifier({ onError: (w) => logger.warn(w) });
  const configureView = viewConfigurer(m, view, opts, memory.restored);
  // The robot's bodies outlive the agents of this process: a reload keeps the simulated body's pose.
  const bodies = new (await import('../src/cortex/bodies.js')).BodyBoard();
  return m.createProcess({
    first: { loaded, plugins, origin: 'start' },
    bus,
    logger,
    notifier,
    connectService: (l) => m.connectService(l, { logger }),
    makeAgent: (g, cloud, first) =>
      new m.Agent({
        bodies,
        loaded: g.loaded,
        plugins: g.plugins,
        cloud,
        bus,
        logger,
        memory: memory.of(g.loaded, first),
        write: view ? (line) => view.consoleLine(line) : () => {},
        ...(capture ? { media: capture.media } : {}),
        fleet: { reload: (text, origin, sender) => reload(text, origin, { fleet: true, pushed: true, sender }), ...(trust ? { trust } : {}) },
        hosted: true,
        // Function hooks live beside the configuration (its folder's hooks/), else in the shipped config/hooks.
        hooksDir: hooksDirFor(g.loaded.file),
      }),
    onGeneration: (g, first) => {
      if (!first) for (const w of g.loaded.warnings) warnLine(w);
      configureView(g.loaded, g.plugins, first);
    },
    ...(opts.for !== undefined ? { forMs: opts.for } : {}),
    exitNow: (signal) => {
      errLine(`cortexd: second ${signal}, exiting now`);
      process.exit(130);
    },
    closeRest: async () => {
      if (metricsServer) await m.bounded('metrics', metricsServer.stop(), 1000, logger);
      if (capture) await m.bounded('recording', capture.close(), 5000, logger);
    },
    ...(inspector ? { inspect: inspector.inspect } : {}),
  });
}

/** The exit code of a finished run; a service that could not start at all is a start-up error. */
function exitCodeOf(outcome: ProcessOutcome): number {
  if (outcome.serviceAtStart) throw new CortexError('service', outcome.reason ?? 'cannot start the service');
  if (outcome.code !== 0) {
    errLine(`cortexd: ${outcome.reason ?? 'the agent failed'}`);
    return EXIT.failure;
  }
  return EXIT.ok;
}

/** Runs an agent to its end; resolves with the exit code. */
export async function runAgent(name: string | undefined, opts: RunOptions): Promise<number> {
  const m = await loadRunModules();
  const { view, logger, tapLog } = startOutput(m, opts);
  // Under the journal the first lines are log records too (one form of output); with --events they stay plain stderr lines.
  const journal = !view && !opts.events;
  const loaded = await (await import('./run-load.js')).loadForRun(name, opts, journal ? (line) => logger.info(line) : errLine);
  for (const w of loaded.warnings) (journal ? (line: string) => logger.warn(line) : warnLine)(w);
  // What a pushed configuration may do, decided by this robot's own file and environment, once, now.
  const policy = m.readReloadPolicy(loaded.config);
  // Whom the fleet channel believes (operator keys, an open broker accepted or not): this file's, for the life of the process.
  const trust = loaded.fleet ? (await import('../src/fleet/trust.js')).trustOf(loaded.fleet) : undefined;
  // The code of exactly the plugins this configuration uses, loaded before anything starts.
  const resolvePlugins = (config: LoadedConfig['config']) => m.resolvePlugins(m.builtinPlugins, config);
  const plugins = await resolvePlugins(loaded.config);
  const metrics = await startMetrics(logger);
  const bus = new m.AgentBus();
  const memory = modeMemories(m, opts, logger);
  const eventLines = opts.events ? m.attachEventLines(bus) : undefined;
  const journalLog = !view && !opts.events ? (await import('./journal-log.js')).attachJournalLog(bus, logger) : undefined;
  const capture = opts.record || opts.foxglove !== undefined ? await startRunCapture(bus, loaded, opts) : undefined;
  if (capture) tapLog((line) => capture.logLine(line));
  const inspector = await startInspector(opts);
  const metricsServer = metrics?.server;
  // A fleet command's reload goes to the reloader, made once the supervisor it hands configurations to exists.
  const fleetReload: Reload = (text, origin, how) => reload(text, origin, how);
  const parts = { loaded, plugins, bus, logger, view, capture, trust, memory, metricsServer, inspector, reload: fleetReload };
  const proc = await startSupervisor(m, opts, parts);
  const reload = configReloader({ proc, policy, own: loaded, logger, loadConfig: m.loadConfig, resolvePlugins, refusals: m });

  view?.attach(bus);
  const metricsSub = metrics?.feed(bus, proc);
  const watcher = opts.watch ? watchConfigFile(m.ConfigWatcher, loaded.file, loaded.sha256, reload, { logger, bus }) : undefined;
  proc.start();
  const outcome = await proc.done;
  watcher?.close();
  metricsSub?.unsubscribe();
  inspector?.stop();
  view?.detach();
  eventLines?.unsubscribe();
  journalLog?.unsubscribe();
  bus.complete();
  return exitCodeOf(outcome);
}

export function register(program: Command): void {
  program
    .command('run')
    .description('run an agent: config/NAME.json5 (or CONFIG=NAME; default: default), until SIGTERM/SIGINT or --for')
    .argument('[name]', 'configuration name (default: $CONFIG, else default)')
    .option('--config <path>', 'run the configuration file at PATH')
    .option('--for <duration>', 'stop (as on SIGTERM) after this long: 500ms, 30s, 2m, 1h', parseDuration)
    .option('--fresh', 'start in the default mode, not in the mode remembered from the last run')
    .option('--events', 'print one JSON line per agent event on stdout instead of the terminal view')
    .option('--inspect [url]', 'send the statecharts to the Stately inspector (default ws://localhost:8080)')
    .option('--watch', 'reload the configuration file when it is saved (a file another user can write starts no program the allowlist does not name)')
    .option(
      '--record <file>',
      'record the run to an MCAP file (events, camera frames, microphone audio, model calls); open it in Foxglove, replay it with cortexd replay',
    )
    .option('--record-rotate-mb <n>', 'start a new file past this size, keeping the older ones as FILE.1.mcap, FILE.2.mcap... (default 256)', positiveNumber)
    .option('--record-keep <n>', 'older recording files kept (default 5)', positiveNumber)
    .option('--record-fps <n>', 'camera frames per second kept in the recording (default: every frame sent)', positiveNumber)
    .option('--foxglove [port]', 'serve the same channels live to Foxglove or Lichtblick on ws://127.0.0.1:PORT (default 8765)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`not a port: "${v}"`);
      return n;
    })
    .option('--om1 [file]', 'read the file as OM1 writes it (its names translated, each translation printed first)')
    .option('--simulate', 'simulated bindings for every device and the embedded service for every address (said in the first lines)')
    .option('--verbose', 'show debug lines, with what devices print (ALSA, the recorder), in the view')
    .option('--websim-port <port>', 'port of the WebSim page (default: its config, else 8000 or the next free one)')
    .action(async (name: string | undefined, opts: RunOptions & { websimPort?: string; verbose?: boolean }) => {
      if (opts.websimPort !== undefined) process.env.CORTEX_WEBSIM_PORT = opts.websimPort;
      if (opts.verbose) process.env.CORTEX_LOG_LEVEL ??= 'debug';
      // No name, no --config, no $CONFIG: the offline companion, config/default.json5.
      const code = await runAgent(name ?? (opts.config || process.env.CONFIG ? undefined : 'default'), opts);
      process.exitCode = code;
      // Whatever a plugin may still hold (stdin, a socket), the process ends shortly after a finished run.
      setTimeout(() => process.exit(code), 1000).unref();
    });
}
