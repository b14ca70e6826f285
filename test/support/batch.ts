// The batches: files of test/unit, test/integration and test/hil run in a few tap processes (test/batches/<group>-N.test.ts), each a subtest named after it.
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { register } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..', '..');

/** A group of batches: the folders whose files they share, the files of those folders that run alone and why, and seconds. */
interface Group {
  /** The batches of the group are test/batches/<name>-N.test.ts; their number is how many such files there are. */
  name: string;
  folders: string[];
  /**
   * Files of those folders that tap runs alone, each in a process of its own, and why. The files of package.json's
   * `tap.serial` stay alone too (they run after the others, with nothing beside them).
   */
  alone: Record<string, string>;
  /**
   * Seconds the longest files take in a batch (measured with two batches side by side); every other file counts `other`.
   * The batches are filled longest first, each file into the batch with the fewest seconds so far, so they end together.
   * A stale figure only costs wall time.
   */
  seconds: Record<string, number>;
  other: number;
}

/** The longest files, which scripts/test.sh runs first, two at a time among themselves. */
const FIRST = 'one of the longest files, which scripts/test.sh runs first, two at a time among themselves (`longest`)';

/** A file that takes `seconds` alone (CI of c667661, two at a time): what a batch would save on it is little. */
const long = (seconds: number): string =>
  `${seconds} s alone: the ~3 s a process costs to start is little of it, and such files, one process each, fill the other slot beside the batches`;

/** The DDS tests that run Cyclone DDS in the test process itself (devices/dds, the native addon). */
const NATIVE_DDS =
  "(useLoopback) runs Cyclone DDS's native addon in the test process (devices/dds): its domains, threads and CYCLONEDDS_URI, read when a domain is made, live as long as the process";

/** The groups of batches: test/unit's files, and test/integration's and test/hil's. */
export const GROUPS: Group[] = [
  {
    name: 'unit',
    folders: ['test/unit'],
    alone: {
      'test/unit/vision-opencv.test.ts':
        "asserts that OpenCV's first load in a process prints no Info lines on stdout: in a batch, another file (devices-camera, pipelines-video) loads it first",
    },
    seconds: {
      'test/unit/house.test.ts': 13.2,
      'test/unit/inputs-vision.test.ts': 10.7,
      'test/unit/architecture.test.ts': 10.6,
      'test/unit/layers.test.ts': 9.6,
      'test/unit/provider-corpus.test.ts': 8.3,
      'test/unit/safety-properties.test.ts': 6.4,
      'test/unit/cortex-loop.test.ts': 5.5,
      'test/unit/actions-halt-order.test.ts': 4.2,
      'test/unit/serial-sim-gps.test.ts': 3.6,
      'test/unit/om1-corpus.test.ts': 2.8,
      'test/unit/modes-paths.test.ts': 2.8,
      'test/unit/pocketsphinx-close.test.ts': 2.8,
      'test/unit/devices-camera.test.ts': 2.6,
      'test/unit/config-corpus.test.ts': 2.5,
      'test/unit/knowledge-index.test.ts': 2.2,
      'test/unit/llm-partial-json.test.ts': 2,
    },
    other: 0.3,
  },
  {
    name: 'integration',
    folders: ['test/hil', 'test/integration'],
    alone: {
      'test/integration/bench-quick.test.ts': FIRST,
      'test/integration/setup-no-opencv.test.ts': FIRST,
      'test/integration/templates-simulate.test.ts': FIRST,
      'test/integration/test-command-machine.test.ts': FIRST,
      'test/integration/agent-leaks.test.ts':
        "measures the test process itself (process.memoryUsage, process.getActiveResourcesInfo) before and after: a neighbouring file's leftovers would count",
      'test/hil/dds-participant.test.ts': NATIVE_DDS,
      'test/hil/navigate-location.test.ts': NATIVE_DDS,
      'test/hil/ros2-lidar.test.ts': NATIVE_DDS,
      'test/hil/dds-topics.test.ts': NATIVE_DDS,
      'test/hil/unitree-g1-api.test.ts': NATIVE_DDS,
      'test/integration/vision-worker-process.test.ts':
        'asserts that the test process, which runs the agent, never loaded OpenCV (/proc/self/maps): in a batch another file loads it first',
      'test/hil/rtsp-camera.test.ts':
        'sets OPENCV_FFMPEG_CAPTURE_OPTIONS (RTSP listen) for the process, which OpenCV reads at each open: a later file opening a stream in the same process would listen too',
      'test/hil/camera-session.test.ts': long(11),
      'test/hil/dds-topics-agent.test.ts': long(10),
      'test/hil/obstacle-guard.test.ts': long(12),
      'test/hil/rplidar-pty.test.ts': long(10),
      'test/integration/cli-bundle.test.ts': long(10),
      'test/integration/cli-init.test.ts': long(18),
      'test/integration/cli-load.test.ts': long(27),
      'test/integration/cli-view-pty.test.ts': long(15),
      'test/integration/contexts-every-config.test.ts': long(16),
      'test/integration/fleet-agent.test.ts': long(19),
      'test/integration/fleet-anonymous-broker.test.ts': long(12),
      'test/integration/fleet-flood.test.ts': long(19),
      'test/integration/graph-corpus.test.ts': long(19),
      'test/integration/mqtt-reconnect.test.ts': long(14),
      'test/integration/om1-run.test.ts': long(16),
      'test/integration/om1-v11-cli.test.ts': long(18),
      'test/integration/provider-corpus-http.test.ts': long(13),
      'test/integration/record-replay.test.ts': long(21),
      'test/integration/run-bundle.test.ts': long(11),
      'test/integration/run-output-redirected.test.ts': long(27),
      'test/integration/streams-fault-proxy.test.ts': long(16),
      'test/integration/streams-local-service.test.ts': long(15),
    },
    seconds: {
      'test/integration/systemd-install.test.ts': 9.5,
      'test/hil/dds-robots.test.ts': 9.4,
      'test/integration/websim-limits.test.ts': 9.2,
      'test/integration/safety-estop-socket.test.ts': 8.5,
      'test/integration/no-sound-card-pty.test.ts': 8.3,
      'test/integration/history-restart.test.ts': 8.0,
      'test/integration/fleet-program-guard.test.ts': 7.6,
      'test/integration/service-cli.test.ts': 7.5,
      'test/integration/fleet-reconnect-reload.test.ts': 7.3,
      'test/integration/agent-wiring-inspect.test.ts': 6.4,
      'test/integration/service-asr.test.ts': 6.3,
      'test/integration/service-file-modes.test.ts': 6.2,
      'test/integration/memory-restart.test.ts': 6.1,
      'test/integration/doctor-cli.test.ts': 6.1,
      'test/integration/voice-stream.test.ts': 5.9,
      'test/integration/cli-check.test.ts': 5.7,
      'test/integration/shutdown-ctrl-c.test.ts': 5.5,
      'test/integration/replay-runs-no-code.test.ts': 5.4,
      'test/hil/presence-video.test.ts': 5.2,
      'test/integration/estop-socket-thread.test.ts': 5.1,
      'test/integration/vision-pool-close.test.ts': 4.9,
      'test/integration/record-lidar.test.ts': 4.9,
      'test/integration/config-file-rules.test.ts': 4.8,
      'test/integration/service-vlm.test.ts': 4.6,
      'test/integration/run-first-tick.test.ts': 4.6,
      'test/integration/mcp-hub.test.ts': 4.6,
      'test/hil/camera-to-socket.test.ts': 4.5,
      'test/integration/local-user-lockout.test.ts': 4.4,
      'test/integration/cloud-sockets.test.ts': 4.4,
      'test/integration/agent-context-rules.test.ts': 4.4,
      'test/hil/safety-serial.test.ts': 4.3,
      'test/integration/contexts-are-data.test.ts': 4.0,
      'test/integration/check-messages.test.ts': 3.9,
      'test/integration/voice-endpoint.test.ts': 3.7,
      'test/hil/speaker-fallback-stream.test.ts': 3.7,
      'test/integration/systemd-watchdog.test.ts': 3.6,
      'test/integration/mcp-reconnect.test.ts': 3.6,
      'test/hil/asr-path-local-service.test.ts': 3.6,
      'test/integration/agent-signals.test.ts': 3.4,
      'test/integration/websim-server.test.ts': 3.3,
      'test/integration/process-service.test.ts': 3.3,
      'test/integration/actions-connectors.test.ts': 3.2,
      'test/integration/agent-run.test.ts': 3.0,
      'test/integration/agent-speech.test.ts': 2.9,
      'test/hil/serial-session.test.ts': 2.9,
      'test/integration/model-endpoint-openai.test.ts': 2.8,
      'test/integration/agent-mcp.test.ts': 2.5,
      'test/hil/battery-serial.test.ts': 2.5,
      'test/integration/fleet-middleware.test.ts': 2.3,
      'test/integration/agent-wiring.test.ts': 2.2,
      'test/hil/microphone-to-socket.test.ts': 2.2,
      'test/integration/websim-voice-socket.test.ts': 2.1,
      'test/integration/websim-access.test.ts': 2.1,
      'test/integration/serial-tree-inspect.test.ts': 2.0,
      'test/integration/service-tts.test.ts': 1.9,
      'test/integration/secrets-redaction.test.ts': 1.8,
      'test/integration/cloud-notify.test.ts': 1.8,
      'test/integration/reload-fallback.test.ts': 1.7,
      'test/hil/rtsp-microphone.test.ts': 1.7,
      'test/hil/om1-backgrounds.test.ts': 1.7,
      'test/integration/process-tree-inspect.test.ts': 1.6,
      'test/integration/agent-systemd.test.ts': 1.6,
      'test/integration/service-chat-openai.test.ts': 1.5,
      'test/integration/service-balance-floor.test.ts': 1.5,
    },
    other: 0.7,
  },
];

interface TapConfig {
  serial: string[];
  exclude: string[];
}
const tapConfig = (): TapConfig => JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).tap;

/** Every test file of the group's folders, in name order. */
const groupFiles = (group: Group): string[] =>
  group.folders
    .flatMap((folder) =>
      readdirSync(join(ROOT, folder))
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => `${folder}/${f}`),
    )
    .sort();

/** The group's files that run alone: its `alone` ones and the serial ones. */
function aloneFiles(group: Group): string[] {
  const { serial } = tapConfig();
  return groupFiles(group).filter((f) => f in group.alone || serial.some((s) => f === s || f.startsWith(`${s}/`)));
}

/**
 * package.json's `tap.exclude` entries that keep tap from running the batched files again, one process each: for each of
 * the group's folders, every file but the ones that run alone. A file named on tap's command line runs alone all the same
 * (tap excludes only from what it finds itself).
 */
export const excludePatterns = (group: Group): string[] => {
  const alone = aloneFiles(group);
  return group.folders.map((folder) => {
    const names = alone.filter((f) => f.startsWith(`${folder}/`)).map((f) => basename(f, '.test.ts'));
    return names.length ? `${folder}/!(${names.join('|')}).test.ts` : `${folder}/*.test.ts`;
  });
};

/** Batch `index` (1-based) of `count` of the group: its files in name order. */
export function batchFiles(group: Group, index: number, count: number): string[] {
  const alone = new Set(aloneFiles(group));
  const load = new Array<number>(count).fill(0);
  const batches = load.map((): string[] => []);
  const seconds = (f: string) => group.seconds[f] ?? group.other;
  const longestFirst = groupFiles(group)
    .filter((f) => !alone.has(f))
    .sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
  for (const f of longestFirst) {
    const i = load.indexOf(Math.min(...load));
    load[i] = (load[i] ?? 0) + seconds(f);
    batches[i]?.push(f);
  }
  return (batches[index - 1] ?? []).sort();
}

/** Changes a file may leave: state that is the process's by nature, made once per process, each with why. */
const PROCESS_WIDE: Array<[RegExp, string]> = [
  [
    /^process\.env\.OPENCV/,
    "loadOpenCV (src/vision/opencv.ts) sets OpenCV's variables before it loads the native module, once per process; later loads return that module",
  ],
];

/** A process-wide thing a test file could leave changed for the next file of its process: how to read it and put it back. */
interface Shared {
  name: string;
  read: () => unknown;
  putBack: (was: unknown) => void;
}

/** Properties of `owner` (called `label`) that a test could replace, as Shared things compared by identity. */
const properties = <T extends object>(label: string, owner: T, keys: Array<keyof T & string>): Shared[] =>
  keys.map((key) => ({ name: `${label}.${key}`, read: () => owner[key], putBack: (was) => void (owner[key] = was as T[typeof key]) }));

const SHARED: Shared[] = [
  { name: 'the working directory', read: () => process.cwd(), putBack: (was) => process.chdir(was as string) },
  ...properties('process', process, ['exitCode', 'emit', 'exit']),
  ...properties('process.stdout', process.stdout, ['write']),
  ...properties('process.stderr', process.stderr, ['write']),
  ...properties('globalThis', globalThis, ['Date', 'fetch', 'setTimeout', 'setInterval', 'setImmediate']),
  ...properties('Date', Date, ['now']),
  ...properties('Math', Math, ['random']),
  ...properties('performance', performance, ['now']),
  ...properties('console', console, ['log', 'error', 'warn', 'info']),
];

/** What the process looks like to a test file: the Shared things and the environment, by name. */
function processState(): Map<string, unknown> {
  const state = new Map<string, unknown>(SHARED.map((s) => [s.name, s.read()]));
  for (const [k, v] of Object.entries(process.env)) state.set(`process.env.${k}`, v);
  return state;
}

/** What differs from `before`, each put back as it was (the next file starts as it would in a process of its own). */
function putBack(before: Map<string, unknown>): string[] {
  const after = processState();
  const changed: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(name);
    if (Object.is(was, after.get(name)) || PROCESS_WIDE.some(([changes]) => changes.test(name))) continue;
    changed.push(name);
    const variable = name.startsWith('process.env.') ? name.slice('process.env.'.length) : undefined;
    if (variable === undefined) SHARED.find((s) => s.name === name)?.putBack(was);
    else if (was === undefined) delete process.env[variable];
    else process.env[variable] = was as string;
  }
  return changed;
}

/** Process events a test or the product code it runs could leave a listener on (signals, exit, errors). */
const EVENTS = ['exit', 'beforeExit', 'uncaughtException', 'unhandledRejection', 'warning', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR2'] as const;

type Listeners = Map<string, Array<(...args: unknown[]) => void>>;
const listeners = (): Listeners => new Map(EVENTS.map((e) => [e, process.listeners(e as 'exit') as Array<(...args: unknown[]) => void>]));

/** Listeners a file may leave on the process: one per process by nature, each with why. */
const PROCESS_WIDE_LISTENERS: Array<[(listener: (...args: unknown[]) => void) => boolean, string]> = [
  [
    (l) => ['onExit', 'onBeforeExit'].includes(l.name) && String(l).includes('callRefs'),
    "on-exit-leak-free's (pino's flush of its streams at exit): one listener per process for every stream, which holds them by weak references and takes itself off",
  ],
];

/** The listeners added since `before`, each taken off again (a signal or exit handler of one file must not act in the next). */
function takeOffListeners(before: Listeners): string[] {
  const added: string[] = [];
  for (const [event, now] of listeners()) {
    const was = before.get(event) ?? [];
    for (const listener of now.filter((l) => !was.includes(l))) {
      if (PROCESS_WIDE_LISTENERS.some(([is]) => is(listener))) continue;
      process.removeListener(event, listener);
      added.push(`process.on('${event}', ${listener.name || String(listener).slice(0, 80)})`);
    }
  }
  return added;
}

/** Counts of the process's active handles and requests by type (timers, sockets, servers, child processes...). */
function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/** The handles left beyond `before`: waits up to `ms` for closing ones to close (a child's exit, a socket's end come later). */
async function leftOpen(before: Map<string, number>, ms: number): Promise<string[]> {
  const extra = () => [...resources()].filter(([type, n]) => n > (before.get(type) ?? 0)).map(([type, n]) => `${type} ×${n - (before.get(type) ?? 0)}`);
  for (const end = Date.now() + ms; extra().length && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
  return extra();
}

/** Symbol under which tap-of-file.mjs finds the subtest of each file, by its URL's path. */
const TESTS = Symbol.for('cortexd.batch');

/**
 * Runs the batch whose file is `batchFile` (test/batches/<group>-N.test.ts; the folder's number of such files is the count):
 * each of its files is imported inside a subtest named after it, and the file's `import t from 'tap'` is that subtest, so its
 * tests, top-level assertions and teardowns are the subtest's, and a failure shows under the file's name.
 */
export async function runBatch(batchFile: string): Promise<void> {
  const [, groupName, number] = basename(batchFile).match(/^([a-z]+)-(\d+)\.test\.ts$/) ?? [];
  const group = GROUPS.find((g) => g.name === groupName);
  if (!group) throw new Error(`${batchFile}: no group of batches is called ${groupName} (test/support/batch.ts)`);
  const name = new RegExp(`^${group.name}-\\d+\\.test\\.ts$`);
  const count = readdirSync(dirname(batchFile)).filter((f) => name.test(f)).length;
  const files = batchFiles(group, Number(number), count);

  for (const pattern of excludePatterns(group)) {
    if (!tapConfig().exclude.includes(pattern)) {
      t.fail(
        `package.json's tap.exclude must hold "${pattern}" (the files of ${group.folders.join(', ')} that run alone are not those it leaves out), or tap runs files twice or never`,
      );
    }
  }

  // Each file keeps tap's limit for one file (its subtest's timeout), or the one it sets itself (t.setTimeout, a hang guard).
  // The process's own limit starts again with each file and follows a limit the file sets, and after the last file the process
  // has tap's limit to end, as a file's own process would: a handle left open cannot keep a batch alive for long.
  const perFile = Number(process.env.TAP_TIMEOUT || 30) * 1000;

  const tests = new Map<string, unknown>();
  (globalThis as Record<symbol, unknown>)[TESTS] = tests;
  register('./batch/tap-hook.mjs', import.meta.url);

  for (const file of files) {
    const url = pathToFileURL(join(ROOT, file));
    const before = processState();
    const resourcesBefore = resources();
    // Taken in the subtest, once tap has put its own listeners on the process for it (exit, beforeExit: it ends its tests).
    let listenersBefore: Listeners = new Map();
    t.setTimeout(perFile + 30_000);
    await t.test(file, { timeout: perFile }, async (sub) => {
      listenersBefore = listeners();
      const fileLimit = sub.setTimeout.bind(sub);
      sub.setTimeout = (n: number) => {
        t.setTimeout(n + 30_000);
        fileLimit(n);
      };
      tests.set(url.pathname, sub);
      await import(url.href);
    });
    const changed = putBack(before);
    if (changed.length) t.fail(`${file} left the process changed for the next file (put back): ${changed.join(', ')}`);
    const added = takeOffListeners(listenersBefore);
    if (added.length) t.fail(`${file} left listeners on the process for the next file (taken off): ${added.join(', ')}`);
    const open = await leftOpen(resourcesBefore, 2_000);
    if (open.length) t.fail(`${file} left handles open 2 s after its end (they would slow or keep alive the batch): ${open.join(', ')}`);
  }
  t.setTimeout(perFile);
}
