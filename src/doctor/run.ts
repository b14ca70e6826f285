// Runs every doctor check in order and formats the report: one line per check with its status and fix.
import type { LoadedConfig } from '../config/schema.js';
import { stateDir } from '../paths.js';
import { checkAddresses, checkApiKey, checkConfig, serviceEnvironment } from './config.js';
import { checkCamera, checkMicrophone, checkSerial, checkSpeaker, type DeviceCheckOptions } from './devices.js';
import { deviceNeeds, type DeviceNeeds } from './needs.js';
import { checkNode, checkPackages, checkStateDir, ok, type CheckResult } from './system.js';

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
  const needs: DeviceNeeds = loaded ? deviceNeeds(loaded.config) : { configured: false, serial: [] };
  const deviceOptions: DeviceCheckOptions = { ...options, env: options.env ?? process.env };
  results.push(await checkMicrophone(needs, deviceOptions));
  results.push(await checkCamera(needs, deviceOptions));
  results.push(...(await checkSerial(needs, deviceOptions)));
  results.push(await checkSpeaker(needs, deviceOptions));
  results.push(checkStateDir(options.stateDir ?? stateDir()));
  results.push(await checkPackages(undefined, options.env ?? process.env));
  return { results, exitCode: results.some((r) => r.status === 'fail') ? 1 : 0 };
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
