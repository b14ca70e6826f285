// `cortexd replay FILE.mcap`: re-runs a recording's inputs through the agent on a simulated clock and prints where the decisions differ
// It exits 1 when they differ; with --summary it prints what the recording holds instead.
import { InvalidArgumentError, type Command } from 'commander';
import { ConfigError, CortexError, describeError, formatIssue } from '../src/errors.js';
import type { HookConfig, LoadedConfig } from '../src/config/schema.js';
import { EXIT, errLine, oneLine, out } from './output.js';

export interface ReplayCliOptions {
  config?: string;
  model?: 'recorded' | 'live';
  summary?: boolean;
  json?: boolean;
}

const kb = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} kB`);

/** The configuration the recording holds: the file's content as it was (secrets redacted), checked as if it were that file. */
interface RecordedConfig {
  file: string;
  config: Record<string, unknown>;
}

/**
 * A recorded configuration is data: its command hooks are not run by a replay (a function hook only
 * loads the local hooks directory). Taken out of the validated configuration, where the hooks the
 * agent would run are exactly these lists, whatever the recorded text looked like.
 */
function withoutCommandHooks(loaded: LoadedConfig, dropped: string[]): LoadedConfig {
  const strip = <H extends HookConfig>(hooks: H[], where: string): H[] =>
    hooks.filter((h, i) => {
      if (h.handler_type !== 'command') return true;
      dropped.push(`${where}[${i}]: ${h.hook_type} command hook`);
      return false;
    });
  const config = loaded.config;
  return {
    ...loaded,
    config: {
      ...config,
      global_lifecycle_hooks: strip(config.global_lifecycle_hooks, 'global_lifecycle_hooks'),
      modes: Object.fromEntries(
        Object.entries(config.modes).map(([k, m]) => [k, { ...m, lifecycle_hooks: strip(m.lifecycle_hooks, `modes.${k}.lifecycle_hooks`) }]),
      ),
    },
  };
}

export async function runReplay(file: string, opts: ReplayCliOptions): Promise<number> {
  const { readRecording, summarise } = await import('../src/record/reader.js');
  let recording: Awaited<ReturnType<typeof readRecording>>;
  try {
    recording = await readRecording(file);
  } catch (err) {
    throw new CortexError('replay', `cannot read ${file}: ${describeError(err)}`);
  }
  if (opts.summary) {
    const s = summarise(recording);
    if (opts.json) {
      out(JSON.stringify(s, null, 2));
      return EXIT.ok;
    }
    out(
      `${file}: ${(s.duration_ms / 1000).toFixed(1)} s from ${s.start ?? '?'}${s.truncated ? ' (cut short: the run was killed; every whole second before the cut is here)' : ''}`,
    );
    out(
      `modes: ${s.modes.join(' -> ') || '(none)'}; model calls ${s.model_calls}; actions ${s.actions}; configuration ${s.has_config ? 'recorded' : 'not recorded'}`,
    );
    for (const c of s.channels) out(`  ${c.topic.padEnd(32)} ${String(c.messages).padStart(7)} messages  ${kb(c.bytes).padStart(9)}  ${c.schema}`);
    return EXIT.ok;
  }

  const [{ loadConfig }, { builtinPlugins }, { replayRecording }, { createLogger, envLogLevel }, { formatDiff }] = await Promise.all([
    import('../src/config/load.js'),
    import('../actors/plugin-registry.js'),
    import('../actors/replay/replay.js'),
    import('../src/log.js'),
    import('../src/record/decisions.js'),
  ]);
  const dropped: string[] = [];
  let loaded: Awaited<ReturnType<typeof loadConfig>>;
  try {
    if (opts.config) loaded = await loadConfig({ file: opts.config });
    else {
      if (!recording.config) throw new CortexError('replay', `${file} holds no configuration: pass --config PATH`);
      const rec = JSON.parse(recording.config) as RecordedConfig;
      loaded = withoutCommandHooks(await loadConfig({ file: rec.file, text: JSON.stringify(rec.config) }), dropped);
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const i of err.issues) errLine(oneLine(formatIssue(i)));
      return EXIT.invalid;
    }
    throw err;
  }
  for (const d of dropped) errLine(`replay: not run (a recorded configuration is data): ${d}`);
  const logger = createLogger({ level: envLogLevel() ?? 'silent' });
  let service: { cloud: import('../src/cloud/client.js').CloudClient; close(): Promise<void> } | undefined;
  if (opts.model === 'live') {
    const { connectService } = await import('../src/cortex/embedded.js');
    service = await connectService(loaded, { logger });
  }
  try {
    const result = await replayRecording({
      recording,
      loaded,
      registry: builtinPlugins,
      model: opts.model ?? 'recorded',
      logger,
      ...(service ? { cloud: service.cloud } : {}),
    });
    const speed = result.simulatedMs / Math.max(result.wallMs, 1);
    if (opts.json) out(JSON.stringify({ same: result.diff.same, ...result, diff: result.diff.rows }, null, 2));
    else {
      out(
        `replayed ${(result.simulatedMs / 1000).toFixed(1)} s in ${(result.wallMs / 1000).toFixed(2)} s (${speed.toFixed(0)}x real time), model ${opts.model ?? 'recorded'}: ${result.recorded.length} recorded decisions, ${result.replayed.length} replayed`,
      );
      if (result.undelivered > 0) out(`${result.undelivered} recorded inputs found no such input in the replay's mode`);
      if (result.extraModelCalls > 0) out(`${result.extraModelCalls} model calls of the replay had no recorded answer near them (answered with nothing)`);
      if (result.missedModelCalls > 0) out(`${result.missedModelCalls} recorded model calls were not asked again`);
      if (result.diff.same) out('same decisions');
      else for (const line of formatDiff(result.diff)) out(line);
    }
    return result.diff.same ? EXIT.ok : EXIT.failure;
  } finally {
    await service?.close();
  }
}

export function register(program: Command): void {
  program
    .command('replay')
    .description('re-run a recording (cortexd run --record) through the agent and compare its decisions; exit 1 when they differ')
    .argument('<file>', 'an MCAP recording')
    .option('--config <path>', 'replay against this configuration (default: the one the recording holds)')
    .option('--model <which>', 'recorded: the recorded answers, no network (default); live: the configured model', (v: string) => {
      if (v !== 'recorded' && v !== 'live') throw new InvalidArgumentError('recorded or live');
      return v;
    })
    .option('--summary', 'print what the recording holds (duration, channels, counts, modes) and exit')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: ReplayCliOptions) => {
      process.exitCode = await runReplay(file, opts);
    });
}
