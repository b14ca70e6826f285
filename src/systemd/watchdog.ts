// The systemd watchdog owner: pings WATCHDOG=1 from an event-loop timer at half of WATCHDOG_USEC, so a blocked loop gets the service restarted.
import type { Notifier } from './notify.js';

/**
 * The watchdog interval systemd asked for, in milliseconds, or undefined when there is none.
 * Mirrors sd_watchdog_enabled(): `WATCHDOG_USEC` must be a positive integer, and when
 * `WATCHDOG_PID` is set it must be this process (a child that inherited the variables must not
 * ping on its parent's behalf).
 */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv = process.env, pid: number = process.pid): number | undefined {
  const usecText = env.WATCHDOG_USEC?.trim();
  if (!usecText || !/^\d+$/.test(usecText)) return undefined;
  const usec = Number(usecText);
  if (!Number.isSafeInteger(usec) || usec <= 0) return undefined;
  const pidText = env.WATCHDOG_PID?.trim();
  if (pidText && Number(pidText) !== pid) return undefined;
  return usec / 1000;
}

export interface WatchdogOptions {
  /** Environment holding WATCHDOG_USEC / WATCHDOG_PID; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Override the interval systemd gave (tests, or a unit that sets none); milliseconds. */
  intervalMs?: number;
  /**
   * Asked before every ping; returning false skips it. The run command passes "the cortex loop
   * ticked recently", so a stuck loop whose event loop is still free also gets restarted.
   */
  healthy?: () => boolean;
}

/**
 * Owner of the watchdog timer. `start()` pings at once and then every `pingIntervalMs`
 * (half of systemd's interval, as sd_watchdog_enabled(3) recommends); `stop()` clears the timer.
 * The timer is unref'd: it never keeps an otherwise finished process alive. When systemd set no
 * watchdog, or the notifier is disabled, start() does nothing.
 *
 * Pings come from a plain timer on the main event loop on purpose: if JavaScript blocks the loop
 * (a synchronous busy loop, a deadlock in native code called synchronously), no ping is sent and
 * systemd kills and restarts the service after WatchdogSec.
 */
export class Watchdog {
  /** systemd's interval in ms, or undefined when the watchdog is off. */
  readonly intervalMs: number | undefined;
  private readonly notifier: Notifier;
  private readonly healthy: () => boolean;
  private timer: NodeJS.Timeout | undefined;
  private skipped = 0;

  constructor(notifier: Notifier, options: WatchdogOptions = {}) {
    this.notifier = notifier;
    this.intervalMs = options.intervalMs ?? watchdogIntervalMs(options.env);
    this.healthy = options.healthy ?? (() => true);
  }

  /** Time between pings in ms (half the interval, at least 1 ms), or undefined when off. */
  get pingIntervalMs(): number | undefined {
    return this.intervalMs === undefined ? undefined : Math.max(1, Math.floor(this.intervalMs / 2));
  }

  /** True while the timer runs. */
  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Pings skipped because `healthy()` said no, since start (for logs and doctor-style reports). */
  get skippedPings(): number {
    return this.skipped;
  }

  start(): void {
    const every = this.pingIntervalMs;
    if (this.timer || every === undefined || !this.notifier.enabled) return;
    this.ping();
    this.timer = setInterval(() => this.ping(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private ping(): void {
    let ok: boolean;
    try {
      ok = this.healthy();
    } catch {
      ok = false;
    }
    if (!ok) {
      this.skipped++;
      return;
    }
    void this.notifier.watchdog();
  }
}
