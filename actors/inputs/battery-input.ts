// BatteryInput: charge and status read from Linux power_supply in sysfs or from a battery board's serial lines, as the "Battery: ..." prompt line.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Observable, asyncScheduler, distinctUntilChanged, exhaustMap, filter, from, map, tap, timer, type SchedulerLike } from 'rxjs';
import type { InputContext, InputFactory, InputMessage, InputPlugin } from '../../src/cortex/input.js';
import { BatteryInputSchema, serialConfigOf, type BatteryInputConfig } from '../../src/plugins/schemas/inputs.js';
import { sharedSerialLine, type SerialLine } from '../../devices/serial.js';
import { CortexError } from '../../src/errors.js';
import { BufferedInput } from './buffered-input.js';
import { batteryChanged } from '../../src/cortex/wake.js';
import { parseBatteryLine } from './battery-line.js';
import { serialSessionInput } from '../streams/serial-session.js';

export { BatteryInputSchema, type BatteryInputConfig };

export interface BatteryReading {
  device: string;
  /** Charge in percent (0..100). */
  percent: number;
  /** As the kernel says: Charging, Discharging, Full, Not charging, Unknown. */
  status: string;
  volts?: number;
  at: number;
}

/** The battery could not be read: no supply of type Battery, or the files are missing or unreadable. */
export class BatteryError extends CortexError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('battery_unreadable', `battery: ${message}`, options);
    this.name = 'BatteryError';
  }
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

async function findBattery(root: string): Promise<string> {
  let names: string[];
  try {
    names = (await readdir(root)).sort();
  } catch (err) {
    throw new BatteryError(`cannot list ${root}`, { cause: err });
  }
  for (const name of names) if ((await readText(join(root, name, 'type'))) === 'Battery') return name;
  throw new BatteryError(`no supply of type Battery under ${root}`);
}

/** Reads one supply: `capacity`, else `energy_now/energy_full` or `charge_now/charge_full`; `status`; `voltage_now` (µV). */
export async function readBattery(root: string, device: string): Promise<BatteryReading> {
  const dir = join(root, device);
  const num = async (f: string) => {
    const s = await readText(join(dir, f));
    const n = s === undefined ? NaN : Number(s);
    return Number.isFinite(n) ? n : undefined;
  };
  let percent = await num('capacity');
  if (percent === undefined) {
    const now = (await num('energy_now')) ?? (await num('charge_now'));
    const full = (await num('energy_full')) ?? (await num('charge_full'));
    if (now !== undefined && full) percent = Math.round((now / full) * 100);
  }
  if (percent === undefined) throw new BatteryError(`${dir} has no capacity, energy or charge files`);
  const micro = await num('voltage_now');
  return {
    device,
    percent: Math.max(0, Math.min(100, percent)),
    status: (await readText(join(dir, 'status'))) ?? 'Unknown',
    ...(micro !== undefined ? { volts: Math.round(micro / 10_000) / 100 } : {}),
    at: Date.now(),
  };
}

/**
 * Listening reads the battery at once and then every `poll_seconds`; a reading is emitted only when
 * the percentage or status changed (an idle robot does not re-read the same line). The buffer keeps
 * the newest. A low battery (at or below `low_percent`, not charging) is a final message. Each
 * change is published as context: `battery_percent`, `battery_status`, `battery_charging`, `battery_low`.
 */
export class BatteryInput extends BufferedInput<BatteryReading> {
  /** Completed reads of the sysfs files, or readings parsed from the serial board (changed or not). */
  reads = 0;
  /** Serial lines that were not a reading (the first is logged, the rest only counted). */
  rejected = 0;
  /** The serial board's port (binding `serial`): its session is the input actor's child `device:serial`. */
  readonly device?: NonNullable<InputPlugin['device']>;

  constructor(
    private readonly config: BatteryInputConfig,
    private readonly ctx?: Pick<InputContext, 'logger' | 'signal' | 'publishContext'>,
    private readonly scheduler: SchedulerLike = asyncScheduler,
    private readonly serial?: SerialLine,
  ) {
    super({
      type: 'BatteryInput',
      descriptor: config.descriptor ?? 'Battery',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'latest',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
    // Nothing about a port is fatal (its session never fails): its states are on the bus, its lines in `readings()`.
    if (serial) this.device = { name: 'serial', kind: 'serial', input: serialSessionInput(serial), onEvent: () => undefined };
  }

  protected source(): Observable<BatteryReading> {
    return this.readings().pipe(
      distinctUntilChanged((a, b) => a.percent === b.percent && a.status === b.status),
      // Context for `context_aware` rules (for example: battery_percent below 20 switches to a charging mode).
      tap((r) =>
        this.ctx?.publishContext?.({
          battery_percent: r.percent,
          battery_status: r.status,
          battery_charging: r.status === 'Charging' || r.status === 'Full',
          battery_low: this.isLow(r),
        }),
      ),
    );
  }

  private readings(): Observable<BatteryReading> {
    const serial = this.serial;
    if (this.config.binding === 'serial') {
      if (!serial) throw new BatteryError('the serial binding needs its port (made by the plugin factory)');
      return serial.lines().pipe(
        map((line) => {
          const parsed = parseBatteryLine(line);
          if (parsed === undefined) return undefined;
          if (typeof parsed === 'string') {
            this.rejected += 1;
            if (this.rejected === 1) this.ctx?.logger?.warn(`battery: ${serial.path}: ${parsed}; further bad lines are only counted`);
            return undefined;
          }
          this.reads += 1;
          return { device: serial.path, percent: parsed.percent, status: parsed.charging ? 'Charging' : 'Discharging', at: Date.now() };
        }),
        filter((r): r is BatteryReading => r !== undefined),
      );
    }
    let device = this.config.device;
    const read = async () => {
      device ??= await findBattery(this.config.path);
      const reading = await readBattery(this.config.path, device);
      this.reads += 1;
      return reading;
    };
    return timer(0, this.config.poll_seconds * 1000, this.scheduler).pipe(exhaustMap(() => from(read())));
  }

  isLow(r: BatteryReading): boolean {
    return r.percent <= this.config.low_percent && r.status !== 'Charging' && r.status !== 'Full';
  }

  /** A meaningful change: the status or low flag, or the charge crossing a `wake_percent_step` bucket. */
  protected override changed(previous: string, next: string): boolean {
    return batteryChanged(previous, next, this.config.wake_percent_step);
  }

  protected toMessage(r: BatteryReading): InputMessage {
    const details = [r.status, ...(r.volts !== undefined ? [`${r.volts} V`] : []), ...(this.isLow(r) ? ['low'] : [])];
    return { timestamp: r.at, text: `${r.percent}% (${details.join(', ')})`, final: this.isLow(r) };
  }
}

/** The BatteryInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createBatteryInput: InputFactory = (raw, ctx) => {
  const config = BatteryInputSchema.parse(raw ?? {});
  if (config.binding !== 'serial') return new BatteryInput(config, ctx);
  // The board's port may be shared (a motor controller that also reports its battery): one open port per process, held by each owner's session.
  const serial = sharedSerialLine(serialConfigOf({ ...config, binding: config.serial_binding }), { logger: ctx.logger });
  return new BatteryInput(config, ctx, asyncScheduler, serial);
};
