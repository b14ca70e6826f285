// Runs every doctor check in order and formats the report: one line per check with its status and fix.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openCvUsers } from '../config/opencv-users.js';
import { ddsUsers } from '../config/dds-users.js';
import type { LoadedConfig } from '../config/schema.js';
import { projectRoot, stateDir } from '../paths.js';
import { checkAddresses, checkApiKey, checkConfig, serviceEnvironment } from './config.js';
import { checkCamera, checkMicrophone, checkSerial, checkSpeaker, type DeviceCheckOptions } from './devices.js';
import { nativeChecks } from './native.js';
import { deviceNeeds, type DeviceNeeds } from '../config/device-needs.js';
import { checkNode, checkPackages, checkStateDir, ok, warn, type CheckResult } from './system.js';

export interface DoctorOptions extends DeviceCheckOptions {
  /** The configuration the service runs (`cortexd@NAME`); without it device checks only warn. */
  target?: { name?: string; file?: string };
  /** Service environment file to read (default /etc/cortexd/env or $CORTEX_SERVICE_ENV_FILE). */
  envFile?: string;
  /** TCP connect timeout per address, ms. */
  reachTimeoutMs?: number;
  stateDir?: string;
}

export interface DoctorReport {
  results: CheckResult[];
  /** 0 when no check failed (warnings allowed), 1 otherwise. */
  exitCode: number;
}

export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const results: CheckResult[] = [checkNode()];
  const { env, file } = serviceEnvironment(options.envFile, options.env ?? process.env);
  if (file) results.push(ok('environment file', `${file} read`));
  const config = await checkConfig(options.target, env);
  results.push(config.result);
  const loaded: LoadedConfig | undefined = config.loaded;
  const reach = await checkAddresses(loaded, env, options.reachTimeoutMs ?? 2000);
  results.push(checkApiKey(loaded, env, reach.addresses));
  results.push(...reach.results);
  if (loaded?.fleet) results.push(await checkFleetBroker(loaded.fleet));
  const needs: DeviceNeeds = loaded ? deviceNeeds(loaded.config) : { configured: false, serial: [] };
  const deviceOptions: DeviceCheckOptions = { ...options, env: options.env ?? process.env };
  results.push(await checkMicrophone(needs, deviceOptions));
  results.push(await checkCamera(needs, deviceOptions));
  results.push(...(await checkSerial(needs, deviceOptions)));
  results.push(await checkSpeaker(needs, deviceOptions));
  const users = loaded ? openCvUsers(loaded.config) : undefined;
  results.push(
    ...(await nativeChecks({
      ...(users ? { openCvUsers: users } : {}),
      ...(loaded ? { ddsUsers: ddsUsers(loaded.config) } : {}),
      env: options.env ?? process.env,
    })),
  );
  results.push(checkStateDir(options.stateDir ?? stateDir()));
  results.push(await checkPackages(robotPackages(Boolean(users?.length)), options.env ?? process.env));
  return { results, exitCode: results.some((r) => r.status === 'fail') ? 1 : 0 };
}

/** Whether the fleet broker lets in clients without credentials: then anyone who reaches it could command the robot. */
async function checkFleetBroker(fleet: NonNullable<LoadedConfig['fleet']>): Promise<CheckResult> {
  const { probeAnonymous } = await import('../mqtt/anonymous-probe.js');
  const name = 'fleet broker credentials';
  const a = await probeAnonymous(fleet);
  if (a === 'closed') return ok(name, 'the broker refuses clients without credentials');
  const fix = fleet.acceptAnonymousBroker
    ? 'give the broker users and an ACL (systemd/mosquitto/cortexd.conf), or sign commands (cortexd fleet keygen, fleet.operator_keys)'
    : 'give the broker users and an ACL (systemd/mosquitto/cortexd.conf); until then the robot refuses every unsigned fleet command but estop';
  if (a === 'open')
    return warn(
      name,
      `the broker lets in clients without credentials: anyone who reaches it could command this robot${fleet.acceptAnonymousBroker ? ' (accepted by fleet.accept_anonymous_broker)' : ''}`,
      fix,
    );
  return warn(name, 'could not tell whether the broker lets in clients without credentials (no answer)', fix);
}

/** `cortexd doctor --native`: only the native modules (each compiled one loaded) and the notify path, as set-up and install.sh run it. */
export async function runNativeDoctor(): Promise<DoctorReport> {
  const results = await nativeChecks({ loadInstalledOpenCv: true });
  return { results, exitCode: results.some((r) => r.status === 'fail') ? 1 : 0 };
}

/**
 * The Debian packages a robot runs with (package.json "debianPackages": robot, plus opencv when the
 * configuration uses OpenCV); the build and test sets are set-up's business. Undefined (the full
 * list of system.ts) when package.json has no such field.
 */
export function robotPackages(withOpenCv: boolean, root: string = projectRoot()): string[] | undefined {
  try {
    const sets = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { debianPackages?: Record<string, string[]> }).debianPackages;
    if (!sets?.robot) return undefined;
    return [...sets.robot, ...(withOpenCv ? (sets.opencv ?? []) : [])];
  } catch {
    return undefined;
  }
}

const MARK: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

/** `ok   node: Node.js 20.20.2` / `FAIL camera: ... -> fix: ...`: one line per check, greppable by status. */
export function formatResult(r: CheckResult): string {
  return `${MARK[r.status]} ${r.name}: ${r.detail}${r.fix ? ` -> fix: ${r.fix}` : ''}`;
}

export function formatSummary(results: CheckResult[]): string {
  const count = (s: CheckResult['status']): number => results.filter((r) => r.status === s).length;
  return `${count('ok')} ok, ${count('warn')} warn, ${count('fail')} fail`;
}
