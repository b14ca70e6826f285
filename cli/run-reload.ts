// `cortexd run`'s reload: a pushed configuration (the fleet's, a --watch save) checked like `cortexd check`, then handed to the process root.
import type { LoadedConfig } from '../src/config/schema.js';
import type { ConfigWatcher } from '../src/config/watch.js';
import type { AgentBus } from '../src/cortex/events.js';
import type { Plugins } from '../src/cortex/plugins.js';
import { ConfigError, describeError, formatIssue } from '../src/errors.js';
import type { CommandResult } from '../src/fleet/execute.js';
import type { ReloadPolicy } from '../src/fleet/reload.js';
import type { Sender } from '../src/fleet/trust.js';
import type { Logger } from '../src/log.js';
import type { ProcessHandle } from '../actors/process/process.js';
import { oneLine } from './output.js';

/** How a configuration arrives: from the fleet channel or not, pushed (not the robot's own trusted file) or not, and who sent it. */
export interface ReloadHow {
  fleet: boolean;
  pushed: boolean;
  sender?: Sender;
}

export type Reload = (text: string, origin: string, how: ReloadHow) => Promise<CommandResult>;

/** What a reload needs of the run: the process root, this robot's policy, and the loader and plugin resolver of the run. */
export interface ReloadDeps {
  proc: Pick<ProcessHandle, 'busy' | 'running' | 'accept'>;
  /** What a pushed configuration may do, decided by this robot's own file and environment at start. */
  policy: ReloadPolicy;
  /** The configuration from the robot's own files at start: where its secrets may go. */
  own: LoadedConfig;
  logger: Logger;
  loadConfig: typeof import('../src/config/load.js').loadConfig;
  resolvePlugins(config: LoadedConfig['config']): Promise<Plugins>;
  refusals: Pick<typeof import('../src/fleet/reload.js'), 'fleetReloadRefusal' | 'programRefusal' | 'variableRefusal' | 'destinationRefusal'>;
}

/**
 * A pushed configuration that loosens any safety limit of the running one (a longer dead-man, a
 * faster rate, a fence removed, the e-stop socket off) needs a sender known to be the operator
 * (src/fleet/trust.ts): a signed fleet command, or a broker with credentials on a robot with no
 * operator key. A file another user can write (--watch) never has one.
 */
async function relaxationRefusal(running: LoadedConfig, next: LoadedConfig, sender: Sender): Promise<CommandResult | undefined> {
  if (sender !== 'anyone') return undefined;
  const { safetyRelaxations } = await import('../src/safety/relaxes.js');
  const loosened = safetyRelaxations(running.config, next.config);
  if (loosened.length === 0) return undefined;
  return {
    ok: false,
    reason: `the new configuration relaxes safety (${loosened.length} limit${loosened.length === 1 ? '' : 's'}), which needs the operator's identity: a command signed with a key of fleet.operator_keys (or, on a robot with no operator key, a broker that requires credentials); ${running.configName} keeps running`,
    lines: loosened,
  };
}

/** The pushed text loaded by the same loader, on the running file's path (so ${CONFIG_DIR} is the same), or the refusal that says why not. */
async function loadPushed(deps: ReloadDeps, running: LoadedConfig, text: string): Promise<LoadedConfig | CommandResult> {
  try {
    return await deps.loadConfig({ file: running.file, text });
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
}

/**
 * Why a pushed configuration may not run here: a program the robot's allowlist does not name, a variable
 * the running one does not read, a secret sent somewhere the robot's own file does not send it, a
 * loosened safety limit without the operator's identity.
 */
async function pushedRefusal(
  deps: ReloadDeps,
  next: LoadedConfig,
  running: LoadedConfig,
  own: LoadedConfig,
  sender: Sender,
): Promise<CommandResult | undefined> {
  const { programRefusal, variableRefusal, destinationRefusal } = deps.refusals;
  return (
    programRefusal(next.config, deps.policy, running.configName) ??
    variableRefusal(next, running) ??
    destinationRefusal(next, own, running.configName) ??
    (await relaxationRefusal(running, next, sender))
  );
}

/**
 * The reload of a run. A pushed configuration is checked like `cortexd check` (same loader, same file
 * path); invalid, the robot keeps the running one and the reply carries the check's lines; valid, the
 * running agent stops (its shutdown hooks run) and a new one starts with it in this process. Nothing is
 * written to disk: the next start reads the file again. A pushed configuration (the fleet's, or a
 * watched file another user can write) starts no program the robot's allowlist does not name
 * (src/fleet/reload.ts); fleet reload can be turned off locally.
 */
export function configReloader(deps: ReloadDeps): Reload {
  const { proc, logger } = deps;
  // The configuration from the robot's own files (the first one, or a trusted --watch save): where its secrets may go.
  let own = deps.own;
  return async (text, origin, how) => {
    const stopping = proc.busy();
    if (stopping === 'the agent is stopping') return { ok: false, reason: stopping };
    const off = how.fleet ? deps.refusals.fleetReloadRefusal(deps.policy) : undefined;
    if (off) return off;
    if (stopping) return { ok: false, reason: stopping };
    const running = proc.running().loaded;
    const next = await loadPushed(deps, running, text);
    if ('ok' in next) return next;
    const refusal = how.pushed ? await pushedRefusal(deps, next, running, own, how.sender ?? 'anyone') : undefined;
    if (refusal) return refusal;
    let nextPlugins: Plugins;
    try {
      nextPlugins = await deps.resolvePlugins(next.config);
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
}

/** --watch: each saved version goes through the same check-then-replace; the file's owner and mode decide whether it is pushed. */
export function watchConfigFile(
  Watcher: typeof ConfigWatcher,
  file: string,
  sha256: string | undefined,
  reload: Reload,
  { logger, bus }: { logger: Logger; bus: AgentBus },
): ConfigWatcher {
  const w = new Watcher(
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
}
