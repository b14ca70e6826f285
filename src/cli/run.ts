// `cortexd run NAME`: loads a configuration, starts the process root (service, watchdog, signals, agent) until a signal or --for, and stops it gracefully.
import { fstatSync } from 'node:fs';
import { createConnection } from 'node:net';
import { hooksDirFor } from '../paths.js';
import { InvalidArgumentError, type Command } from 'commander';
import type { LoadedConfig } from '../config/schema.js';
import type { Sender } from '../fleet/trust.js';
import { ConfigError, CortexError, describeError, formatIssue } from '../errors.js';
import type { CommandResult } from '../fleet/execute.js';
import type { ModeMemoryStore } from '../modes/memory.js';
import type { Plugins } from '../cortex/plugins.js';
import { EXIT, errLine, oneLine, warnLine } from './output.js';
import { startRunCapture } from './run-capture.js';
import type { RunOptions } from './run-options.js';

export type { RunOptions };

/** Everything a run needs, loaded when `cortexd run` runs (the agent and its plugins live in actors/, above src/). */
async function loadRunModules() {
  const [agent, plugins, load, embedded, events, log, notify, proc, view, memory, paths, reloadPolicy, watch] = await Promise.all([
    import('../../actors/agent.js'),
    import('../../actors/plugins.js'),
    import('../config/load.js'),
    import('../cortex/embedded.js'),
    import('../cortex/events.js'),
    import('../log.js'),
    import('../systemd/notify.js'),
    import('../../actors/process.js'),
    import('./view.js'),
    import('../modes/memory.js'),
    import('../paths.js'),
    import('../fleet/reload.js'),
    import('../config/watch.js'),
  ]);
  const { canPlaySound } = await import('../sound-output.js');
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

/**
 * A pushed configuration that loosens any safety limit of the running one (a longer dead-man, a
 * faster rate, a fence removed, the e-stop socket off) needs a sender known to be the operator
 * (src/fleet/trust.ts): a signed fleet command, or a broker with credentials on a robot with no
 * operator key. A file another user can write (--watch) never has one.
 */
async function relaxationRefusal(running: LoadedConfig, next: LoadedConfig, sender: Sender): Promise<CommandResult | undefined> {
  if (sender !== 'anyone') return undefined;
  const { safetyRelaxations } = await import('../safety/relaxes.js');
  const loosened = safetyRelaxations(running.config, next.config);
  if (loosened.length === 0) return undefined;
  return {
    ok: false,
    reason: `the new configuration relaxes safety (${loosened.length} limit${loosened.length === 1 ? '' : 's'}), which needs the operator's identity: a command signed with a key of fleet.operator_keys (or, on a robot with no operator key, a broker that requires credentials); ${running.configName} keeps running`,
    lines: loosened,
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

/** Runs an agent to its end; resolves with the exit code. */
export async function runAgent(name: string | undefined, opts: RunOptions): Promise<number> {
  const {
    Agent,
    AgentBus,
    Notifier,
    TerminalView,
    attachEventLines,
    bounded,
    builtinPlugins,
    connectService,
    createLogger,
    envLogLevel,
    createProcess,
    fileModeMemory,
    loadConfig,
    modeMemoryPath,
    resolvePlugins,
    setLogger,
    speechFacts,
    replayFacts,
    stateDir,
    ConfigWatcher,
    fleetReloadRefusal,
    programRefusal,
    variableRefusal,
    destinationRefusal,
    readReloadPolicy,
    canPlaySound,
    join,
  } = await loadRunModules();
  // One form of output, never both: the view (a terminal, or its output redirected to a file or a pipe)
  // with the log's warnings among its lines, or the JSON log (under systemd's journal, and with --events,
  // whose stdout is JSON events). Logs below warnings would only repeat the view.
  const viewOn = !opts.events && !toJournal();
  const view = viewOn ? new TerminalView() : undefined;
  const level = envLogLevel();
  // A recording (--record, --foxglove) gets every log line too, once it has started.
  let logTap: ((line: string) => void) | undefined;
  const tee = (line: string) => logTap?.(line);
  const logger = createLogger(view ? { level: level ?? 'warn', destination: view.logDestination(), tee } : { tee });
  setLogger(logger);
  const loaded = await (await import('./run-load.js')).loadForRun(name, opts, Boolean(opts.events));
  for (const w of loaded.warnings) warnLine(w);
  // What a pushed configuration may do, decided by this robot's own file and environment, once, now.
  const policy = readReloadPolicy(loaded.config);
  // The configuration from the robot's own files (this one, or a trusted --watch save): where its secrets may go.
  let own: LoadedConfig = loaded;
  // Whom the fleet channel believes (operator keys, an open broker accepted or not): this file's, for the life of the process.
  const trust = loaded.fleet ? (await import('../fleet/trust.js')).trustOf(loaded.fleet) : undefined;
  // The code of exactly the plugins this configuration uses, loaded before anything starts.
  const plugins = await resolvePlugins(builtinPlugins, loaded.config);

  const notifier = new Notifier({ onError: (m) => logger.warn(m) });
  // Metrics are read only through their endpoint: without CORTEX_METRICS_PORT, prom-client (with
  // @opentelemetry/api, about 85 modules) is not loaded and nothing records them (the first tick stays short).
  const metricsCode = process.env.CORTEX_METRICS_PORT?.trim()
    ? { ...(await import('../metrics/prometheus.js')), ...(await import('../metrics/feed.js')) }
    : undefined;
  const metricsOptions = metricsCode?.metricsOptionsFromEnv();
  const metrics = metricsCode && metricsOptions ? new metricsCode.Metrics() : undefined;
  const metricsServer = metricsCode && metrics && metricsOptions ? new metricsCode.MetricsServer(metrics, metricsOptions) : undefined;
  if (metricsServer) {
    const at = await metricsServer.start();
    logger.info(`metrics on ${at.url}`);
  }

  const bus = new AgentBus();
  // Mode memory, read through this store so the view can say that the start mode was restored; --fresh
  // ignores it at start (a configuration the fleet reloads starts where its memory says).
  let restoredMode: string | undefined;
  const memoryOf = (l: LoadedConfig, first: boolean): ModeMemoryStore | false => {
    const file = l.config.mode_memory_enabled ? fileModeMemory(modeMemoryPath(l.configName, stateDir()), (m) => logger.warn(m)) : undefined;
    if (!file) return false;
    return {
      load: () => {
        if (first && opts.fresh) return {};
        const read = file.load();
        if (first) restoredMode = read.memory?.current;
        return read;
      },
      save: (m) => file.save(m),
    };
  };
  const eventLines = opts.events ? attachEventLines(bus) : undefined;
  const capture = opts.record || opts.foxglove !== undefined ? await startRunCapture(bus, loaded, opts) : undefined;
  if (capture) logTap = (line) => capture.logLine(line);
  const inspectUrl = opts.inspect ? (typeof opts.inspect === 'string' ? opts.inspect : 'ws://localhost:8080') : undefined;
  if (inspectUrl) {
    if (await listening(inspectUrl)) errLine(`cortexd: --inspect: sending the statecharts to ${inspectUrl}`);
    else
      errLine(
        `cortexd: --inspect: nothing listens at ${inspectUrl} yet; the statecharts are sent once something does (retried every 5 s; see docs/running.md, "Inspecting a run")`,
      );
  }
  // @statelyai/inspect (80 ms of CPU to load) only when asked for.
  const inspector = inspectUrl ? (await import('../../actors/modes/inspect.js')).createModeInspector({ url: inspectUrl }) : undefined;

  // Whether a player can play here: the start says where speech really goes (no sound card: files).
  const soundCard = canPlaySound();
  // What the terminal view says of a configuration: mode names, where speech goes, the start mode.
  const configureView = (l: LoadedConfig, p: Plugins, first: boolean) => {
    const c = l.config;
    const startMode = first && restoredMode !== undefined && Object.hasOwn(c.modes, restoredMode) ? restoredMode : c.default_mode;
    const typed = c.modes[startMode]?.agent_inputs.some((i) => p.descriptors.inputs.get(i.type)?.typedText === true) ?? false;
    view?.configure({
      displayNames: Object.fromEntries(Object.entries(c.modes).map(([k, m]) => [k, m.display_name])),
      ...speechFacts(c, { card: soundCard, fallbackDir: join(stateDir(), 'speech') }),
      ...replayFacts(c),
      defaultMode: c.default_mode,
      ...(first && restoredMode !== undefined ? { restoredMode } : {}),
      freshCommand: `cortexd run ${opts.config ? `--config ${opts.config}` : l.configName} --fresh`,
      typed,
    });
  };

  // The robot's bodies outlive the agents of this process: a reload keeps the simulated body's pose.
  const bodies = new (await import('../cortex/bodies.js')).BodyBoard();

  // The process root (actors/process.ts): signals, sd_notify and the watchdog, the service, and the agent
  // subtree, which a reload replaces under the same root.
  const proc = createProcess({
    first: { loaded, plugins, origin: 'start' },
    bus,
    logger,
    notifier,
    connectService: (l) => connectService(l, { logger }),
    makeAgent: (g, cloud, first) =>
      new Agent({
        bodies,
        loaded: g.loaded,
        plugins: g.plugins,
        cloud,
        bus,
        logger,
        memory: memoryOf(g.loaded, first),
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
      if (metricsServer) await bounded('metrics', metricsServer.stop(), 1000, logger);
      if (capture) await bounded('recording', capture.close(), 5000, logger);
    },
    ...(inspector ? { inspect: inspector.inspect } : {}),
  });

  // --- fleet reload: a pushed configuration is checked like `cortexd check` (same loader, same
  // file path, so ${CONFIG_DIR} is the same); invalid, the robot keeps the running one and the reply
  // carries the check's lines; valid, the running agent stops (its shutdown hooks run) and a new one
  // starts with it in this process. Nothing is written to disk: the next start reads the file again.
  // A pushed configuration (the fleet's, or a watched file another user can write) starts no program the
  // robot's allowlist does not name (src/fleet/reload.ts); fleet reload can be turned off locally.
  const reload = async (text: string, origin: string, how: { fleet: boolean; pushed: boolean; sender?: Sender }): Promise<CommandResult> => {
    const stopping = proc.busy();
    if (stopping === 'the agent is stopping') return { ok: false, reason: stopping };
    const off = how.fleet ? fleetReloadRefusal(policy) : undefined;
    if (off) return off;
    if (stopping) return { ok: false, reason: stopping };
    const running = proc.running().loaded;
    let next: LoadedConfig;
    try {
      next = await loadConfig({ file: running.file, text });
    } catch (err) {
      if (!(err instanceof ConfigError))
        return { ok: false, reason: `the new configuration was not loaded: ${describeError(err)}; ${running.configName} keeps running` };
      const n = err.issues.length;
      return {
        ok: false,
        reason: `the new configuration is invalid (${n} problem${n === 1 ? '' : 's'}); ${running.configName} keeps running`,
        lines: err.issues.map((i) => oneLine(formatIssue(i))),
      };
    }
    const refusal = how.pushed
      ? (programRefusal(next.config, policy, running.configName) ??
        variableRefusal(next, running) ??
        destinationRefusal(next, own, running.configName) ??
        (await relaxationRefusal(running, next, how.sender ?? 'anyone')))
      : undefined;
    if (refusal) return refusal;
    let nextPlugins: Plugins;
    try {
      nextPlugins = await resolvePlugins(builtinPlugins, next.config);
    } catch (err) {
      return { ok: false, reason: `the new configuration's plugins did not load: ${describeError(err)}; ${running.configName} keeps running` };
    }
    const busy = proc.busy();
    if (busy) return { ok: false, reason: busy };
    for (const w of next.warnings) logger.warn(w);
    if (!how.pushed) own = next;
    proc.accept({ loaded: next, plugins: nextPlugins, origin });
    return {
      ok: true,
      reason: `valid; restarting the agent with it (sha256 ${next.sha256 ?? '?'})`,
      ...(next.warnings.length > 0 ? { lines: next.warnings.map(oneLine) } : {}),
    };
  };
  // --watch: each saved version goes through the same check-then-replace; the file's owner and mode decide whether it is pushed.
  const watchFile = (file: string, sha256: string | undefined) => {
    const w = new ConfigWatcher(
      file,
      {
        onError: (m) => logger.warn(m),
        onVersion: (v) => {
          const origin = `--watch ${file}${v.trusted ? '' : ` (${v.why}: treated as pushed)`}`;
          void reload(v.text, origin, { fleet: false, pushed: !v.trusted }).then((r) => {
            const lines = r.lines?.length ? `: ${r.lines.join('; ')}` : '';
            if (r.ok) logger.info(`${origin}: ${r.reason ?? 'reloading'}`);
            else {
              logger.warn(`${origin}: reload refused: ${r.reason ?? 'refused'}${lines}`);
              bus.emit({ type: 'error', at: Date.now(), source: 'reload', message: `${origin}: reload refused: ${r.reason ?? 'refused'}${lines}` });
            }
          });
        },
      },
      sha256,
    );
    w.start();
    return w;
  };
  // --- end fleet reload

  view?.attach(bus);
  const metricsSub = metrics
    ? metricsCode?.feedMetrics(bus, metrics, {
        hertzOf: (mode) => proc.config().modes[mode]?.hertz ?? 1,
        modelOf: (mode) => proc.config().modes[mode]?.cortex_llm.type,
      })
    : undefined;

  const watcher = opts.watch ? watchFile(loaded.file, loaded.sha256) : undefined;
  proc.start();
  const outcome = await proc.done;
  watcher?.close();
  metricsSub?.unsubscribe();
  if (inspector) inspector.stop();
  view?.detach();
  eventLines?.unsubscribe();
  bus.complete();
  if (outcome.serviceAtStart) throw new CortexError('service', outcome.reason ?? 'cannot start the service');
  if (outcome.code !== 0) {
    errLine(`cortexd: ${outcome.reason ?? 'the agent failed'}`);
    return EXIT.failure;
  }
  return EXIT.ok;
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
