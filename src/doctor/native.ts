// Doctor's native-module checks: better-sqlite3, unix-dgram, serialport's binding and OpenCV load in this process, and the service unit's sd_notify path works.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DDS_FIX, DDS_PACKAGE, ddsInstall, describeDdsMissing, type DdsUser } from '../config/dds-users.js';
import { describeMissing, openCvInstall, OPENCV_FIX, OPENCV_PACKAGE, type OpenCvUser } from '../config/opencv-users.js';
import { describeError } from '../errors.js';
import { projectRoot } from '../paths.js';
import { loadSqlite, SQLITE_NAPI, sqlitePackage } from '../service/sqlite.js';
import { fail, ok, onPath, warn, type CheckResult } from './system.js';

/** The unit doctor compares the notify path with when it is installed; else the package's own copy. */
export const INSTALLED_UNIT = '/etc/systemd/system/cortexd@.service';

export interface NativeCheckOptions {
  /** Resolve the modules as a file at this path would (default: this module); tests point it at a tree without them. */
  from?: string;
  /** Entries of the configuration that load OpenCV; undefined when no configuration was loaded. */
  openCvUsers?: OpenCvUser[];
  /** Entries of the configuration that need the DDS addon; undefined when no configuration was loaded. */
  ddsUsers?: DdsUser[];
  /** Load OpenCV whenever its bindings are compiled, needed or not (`doctor --native`, set-up). */
  loadInstalledOpenCv?: boolean;
  /** The service unit to read NotifyAccess from (default: INSTALLED_UNIT if present, else systemd/cortexd@.service). */
  unitFile?: string;
  env?: NodeJS.ProcessEnv;
}

/** How to rebuild a native package: in a checkout with npm, or on the build machine for an installed tree. */
export function rebuildFix(pkg: string, root: string = projectRoot()): string {
  if (existsSync(join(root, 'scripts', 'setup.sh'))) {
    return `cd ${root} && npm rebuild ${pkg} (it compiles with python3, make and g++: sudo apt-get install python3 make g++), or run bash scripts/setup.sh again`;
  }
  return `${root} is an installed tree: rebuild in the source checkout (npm rebuild ${pkg}, or bash scripts/setup.sh), then run systemd/install.sh again`;
}

function requireFrom(from: string): NodeRequire {
  return createRequire(from);
}

export function checkBetterSqlite(from: string = import.meta.url): CheckResult {
  const name = 'better-sqlite3';
  const pkg = sqlitePackage();
  const which = pkg === SQLITE_NAPI ? '' : ` (${pkg}: better-sqlite3 12 for Node-API ${process.versions.napi})`;
  try {
    const Database = loadSqlite(from);
    const db = new Database(':memory:');
    const version = (db.prepare('select sqlite_version() as v').get() as { v: string }).v;
    db.close();
    return ok(name, `loads${which} (SQLite ${version}): the local service's keys, balances and usage`);
  } catch (err) {
    // 13's binary comes in the package (glibc 2.34+); elsewhere it compiles from its sources.
    const fix =
      pkg === SQLITE_NAPI
        ? `reinstall it (npm ci), or compile it for this machine: cd ${join(projectRoot(), 'node_modules', pkg)} && npm run build-release (python3, make and g++)`
        : `${rebuildFix(pkg)}; or use Node.js 22.14+ (24 LTS), whose better-sqlite3 13 needs no compiling`;
    return fail(name, `does not load${which}: ${firstLine(err)}; the local service (embedded or cortexd cloud) cannot open its database`, fix);
  }
}

/** Loads unix-dgram and opens and closes one datagram socket; the error text when it cannot. */
export function tryUnixDgram(from: string = import.meta.url): { ok: true } | { ok: false; error: string } {
  try {
    const lib = requireFrom(from)('unix-dgram') as { createSocket(type: 'unix_dgram'): { close(): void } };
    lib.createSocket('unix_dgram').close();
    return { ok: true };
  } catch (err) {
    return { ok: false, error: firstLine(err) };
  }
}

export function checkUnixDgram(from: string = import.meta.url): CheckResult {
  const r = tryUnixDgram(from);
  if (r.ok) return ok('unix-dgram', 'loads: sd_notify messages go from node itself');
  return fail('unix-dgram', `does not load: ${r.error}; sd_notify falls back to systemd-notify (see the service notify line)`, rebuildFix('unix-dgram'));
}

/** serialport's native binding (@serialport/bindings-cpp), resolved as serialport resolves it; requiring it loads the compiled module. */
export function checkSerialBinding(from: string = import.meta.url): CheckResult {
  const name = 'serial binding';
  try {
    const serialport = requireFrom(from).resolve('serialport');
    const bindings = createRequire(serialport)('@serialport/bindings-cpp') as { autoDetect(): unknown };
    if (!bindings.autoDetect()) throw new Error('autoDetect() returned no binding for this platform');
    return ok(name, '@serialport/bindings-cpp loads');
  } catch (err) {
    return fail(
      name,
      `@serialport/bindings-cpp does not load: ${firstLine(err)}; serial ports (motors, sensors, GPS) cannot open`,
      rebuildFix('@serialport/bindings-cpp'),
    );
  }
}

function listUsers(users: OpenCvUser[]): string {
  const shown = users.slice(0, 3).map((u) => `${u.path} (${u.why})`);
  return users.length > 3 ? `${shown.join(', ')} and ${users.length - 3} more` : shown.join(', ');
}

/**
 * OpenCV is loaded when the configuration uses it (or `loadInstalledOpenCv`), through the one loader
 * src/vision/opencv.ts. Not needed and not installed is fine: set-up skipped it on purpose.
 */
export async function checkOpenCv(options: NativeCheckOptions = {}): Promise<CheckResult> {
  const name = 'OpenCV';
  const users = options.openCvUsers;
  const needed = (users?.length ?? 0) > 0;
  const install = openCvInstall(options.from ?? import.meta.url);
  const neededBy = needed ? `; needed by ${listUsers(users!)}` : '';
  if (install.state !== 'built') {
    if (needed) return fail(name, `${describeMissing(install)}${neededBy}`, OPENCV_FIX);
    const why = users ? 'the configuration does not use a camera or local vision' : 'configurations with a camera or local vision need it';
    return ok(name, `${describeMissing(install)}; ${why}`);
  }
  if (!needed && !options.loadInstalledOpenCv) {
    return ok(name, `bindings compiled, not loaded: ${users ? 'the configuration does not use a camera or local vision' : 'no configuration named'}`);
  }
  try {
    const { loadOpenCV } = await import('../vision/opencv.js');
    const cv = (await loadOpenCV()) as unknown as { version?: { major: number; minor: number; revision: number } };
    const v = cv.version ? ` ${cv.version.major}.${cv.version.minor}.${cv.version.revision}` : '';
    return ok(name, `OpenCV${v} loads${neededBy}`);
  } catch (err) {
    return fail(
      name,
      `the bindings are compiled but do not load: ${firstLine(err)}${neededBy}`,
      `check the system OpenCV (sudo apt-get install libopencv-dev opencv-data), then ${rebuildFix(OPENCV_PACKAGE)}`,
    );
  }
}

/**
 * The DDS addon: loaded whenever it is built (it is small and loads in milliseconds; a CycloneDDS
 * library that went missing shows here). Not built: a failure only when the configuration needs it.
 */
export function checkDds(options: NativeCheckOptions = {}): CheckResult {
  const name = 'DDS (CycloneDDS)';
  const users = options.ddsUsers;
  const needed = (users?.length ?? 0) > 0;
  const neededBy = needed
    ? `; needed by ${users!
        .slice(0, 3)
        .map((u) => `${u.path} (${u.why})`)
        .join(', ')}${users!.length > 3 ? ` and ${users!.length - 3} more` : ''}`
    : '';
  const install = ddsInstall(options.from ?? import.meta.url);
  if (install.state !== 'built') {
    if (needed) return fail(name, `${describeDdsMissing(install)}${neededBy}`, DDS_FIX);
    return ok(name, `${describeDdsMissing(install)}; ${users ? 'the configuration drives no robot over DDS' : 'robots over DDS (unitree_dds, ros2) need it'}`);
  }
  try {
    const addon = createRequire(options.from ?? import.meta.url)(DDS_PACKAGE) as { cyclonedds?: string };
    return ok(name, `the addon loads (CycloneDDS ${addon.cyclonedds ?? '?'})${neededBy}`);
  } catch (err) {
    return fail(
      name,
      `the addon is compiled but does not load: ${firstLine(err)}${neededBy}`,
      `check libddsc (sudo apt-get install libddsc0debian cyclonedds-dev), then ${rebuildFix(DDS_PACKAGE)}`,
    );
  }
}

/** NotifyAccess of a unit file and its drop-ins (`<unit>.d/*.conf`, the last setting wins); systemd's default for Type=notify is main. */
export function unitNotifyAccess(unitFile: string): string {
  const files = [unitFile];
  const dropIns = `${unitFile}.d`;
  try {
    files.push(
      ...readdirSync(dropIns)
        .filter((f) => f.endsWith('.conf'))
        .sort()
        .map((f) => join(dropIns, f)),
    );
  } catch {
    // no drop-in directory
  }
  let access = 'main';
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^\s*NotifyAccess\s*=\s*(\S+)\s*$/.exec(line);
      if (m) access = m[1]!;
    }
  }
  return access;
}

/**
 * The service's readiness and watchdog messages arrive: unix-dgram sends them from node, the unit's
 * main process, which any NotifyAccess but `none` accepts. Without it the runtime falls back to
 * systemd-notify (src/systemd/notify.ts), a child process, which only NotifyAccess=all accepts;
 * under `main` systemd would never see READY=1 and would stop the unit after TimeoutStartSec.
 */
export function checkNotifyPath(options: NativeCheckOptions = {}): CheckResult {
  const name = 'service notify';
  const unitFile = options.unitFile ?? (existsSync(INSTALLED_UNIT) ? INSTALLED_UNIT : join(projectRoot(), 'systemd', 'cortexd@.service'));
  if (!existsSync(unitFile))
    return warn(name, `${unitFile} not found: cannot compare the notify path with the unit`, 'install the units with systemd/install.sh');
  let access: string;
  try {
    access = unitNotifyAccess(unitFile);
  } catch (err) {
    return warn(name, `cannot read ${unitFile}: ${describeError(err)}`, 'check the file permissions');
  }
  if (access === 'none') {
    return fail(name, `${unitFile} has NotifyAccess=none: systemd ignores READY=1 and the watchdog`, 'set NotifyAccess=main (the shipped units do)');
  }
  const dgram = tryUnixDgram(options.from ?? import.meta.url);
  if (dgram.ok) return ok(name, `unix-dgram sends READY=1 and WATCHDOG=1 from node, which NotifyAccess=${access} in ${unitFile} accepts`);
  const program = onPath('systemd-notify', options.env ?? process.env);
  if (access === 'all' && program) {
    return warn(name, `unix-dgram does not load; messages go through ${program}, which NotifyAccess=all in ${unitFile} accepts`, rebuildFix('unix-dgram'));
  }
  const fallback = program ? 'the systemd-notify fallback sends from a child process' : 'the systemd-notify fallback is not on PATH';
  return fail(
    name,
    `unix-dgram does not load (${dgram.error}) and ${fallback}, which NotifyAccess=${access} in ${unitFile} ignores: systemd never sees READY=1 and stops the service after TimeoutStartSec`,
    `${rebuildFix('unix-dgram')}; or accept the fallback with a drop-in (sudo systemctl edit cortexd@.service: [Service] NotifyAccess=all)`,
  );
}

/** Every native check in order: the three required modules, OpenCV, then the notify path. */
export async function nativeChecks(options: NativeCheckOptions = {}): Promise<CheckResult[]> {
  const from = options.from ?? import.meta.url;
  return [checkBetterSqlite(from), checkUnixDgram(from), checkSerialBinding(from), await checkOpenCv(options), checkDds(options), checkNotifyPath(options)];
}

/** A resolvable base for `from` given a directory (tests): a file URL inside it. */
export function fromDirectory(dir: string): string {
  return pathToFileURL(join(dir, 'doctor.js')).href;
}

/** First line of an error, without the require stack Node appends to MODULE_NOT_FOUND. */
function firstLine(err: unknown): string {
  return describeError(err).split('\n')[0]!;
}
