// `run --record` and `run --foxglove`: starts the capture of a run (the recording file, the live Foxglove socket) and says where it goes.
import { readFile } from 'node:fs/promises';
import type { LoadedConfig } from '../src/config/schema.js';
import type { AgentBus } from '../src/cortex/events.js';
import { CortexError, describeError } from '../src/errors.js';
import { stateDir } from '../src/paths.js';
import { errLine } from './output.js';
import type { RunOptions } from './run-options.js';

/**
 * The token of the live Foxglove socket: the one WebSim uses, i.e. the first WebSim block's `token`
 * (or CORTEX_WEBSIM_TOKEN), else the generated one kept 0600 in the state directory. One secret for
 * both views of the robot; where it is kept is said, never the token.
 */
export async function foxgloveToken(loaded: LoadedConfig): Promise<{ token: string; where: string }> {
  const { resolveWebSimOptions } = await import('../src/websim/options.js');
  const { loadOrCreateToken, tokenPath } = await import('../src/websim/token.js');
  for (const mode of Object.values(loaded.config.modes))
    for (const sim of mode.simulators ?? [])
      if (sim.type === 'WebSim') {
        const token = resolveWebSimOptions(sim.config).token;
        if (token !== undefined) return { token, where: 'the WebSim token of the configuration (or CORTEX_WEBSIM_TOKEN)' };
      }
  const fromEnv = resolveWebSimOptions({}).token;
  if (fromEnv !== undefined) return { token: fromEnv, where: 'CORTEX_WEBSIM_TOKEN' };
  const kept = loadOrCreateToken(stateDir());
  return { token: kept.token, where: tokenPath(stateDir()) };
}

/** The default port of Foxglove's WebSocket protocol. */
export const FOXGLOVE_PORT = 8765;

export async function startRunCapture(bus: AgentBus, loaded: LoadedConfig, opts: RunOptions) {
  const { startCapture } = await import('../src/record/capture.js');
  // The file as written (variables not expanded, so no secret from the environment enters it); secret fields are blanked by the capture.
  let config: unknown;
  try {
    // Loaded here, not at the top: every `cortexd` command imports run.ts, and `estop` must not need json5.
    const { default: JSON5 } = await import('json5');
    config = { file: loaded.file, config: JSON5.parse(await readFile(loaded.file, 'utf8')) };
  } catch {
    config = undefined;
  }
  const live = opts.foxglove !== undefined ? await foxgloveToken(loaded) : undefined;
  try {
    const capture = await startCapture({
      bus,
      ...(opts.record
        ? {
            record: {
              file: opts.record,
              ...(opts.recordRotateMb ? { rotateBytes: opts.recordRotateMb * 1024 * 1024 } : {}),
              ...(opts.recordKeep ? { keep: Math.floor(opts.recordKeep) } : {}),
              ...(opts.recordFps ? { fps: opts.recordFps } : {}),
            },
          }
        : {}),
      ...(opts.foxglove !== undefined && live ? { foxglove: opts.foxglove === true ? FOXGLOVE_PORT : opts.foxglove, foxgloveToken: live.token } : {}),
      config,
      onError: (m) => errLine(`cortexd: ${m}`),
      onWarning: (m) => errLine(`cortexd: ${m}`),
    });
    if (opts.record) errLine(`cortexd: recording to ${opts.record} (cortexd replay ${opts.record} --summary shows what it holds)`);
    if (capture.foxgloveUrl)
      errLine(
        `cortexd: Foxglove live view at ${capture.foxgloveUrl} (open ${capture.foxgloveUrl}/?token=TOKEN in Foxglove or Lichtblick: "Open connection", Foxglove WebSocket; TOKEN is in ${live?.where})`,
      );
    return capture;
  } catch (err) {
    throw new CortexError('record', `cannot start the recording: ${describeError(err)}`);
  }
}
