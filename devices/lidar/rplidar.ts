// The RPLidar driver: a Slamtec RPLidar on a serial line, opened by a session actor: health, info, motor, SCAN, and revolutions as scans.
import type { Logger } from 'pino';
import { Subject, type Subscription } from 'rxjs';
import { sharedSerialLine, type SerialLine } from '../serial.js';
import { LinkEnd, type OpenableDevice } from '../device-link.js';
import { DeviceError } from '../device-error.js';
import type { StreamLink } from '../../src/cloud/link.js';
import { describeError } from '../../src/errors.js';
import type { Scan } from '../../src/lidar/scan.js';
import type { RplidarConfig } from '../../src/config/lidar.js';
import { CMD, RplidarDecoder, TYPE, modelName, parseHealth, parseInfo, request, u16, type DecoderEvent, type ScanNode } from './rplidar-protocol.js';
import type { LidarSource } from './source.js';

/** The baud rates of the families, for the message of a sensor that answers in noise. */
const RATES = 'A1 and A2M8: 115200, A2M12, A3 and S1: 256000, C1: 460800';
/** Fewer nodes than this in a revolution is no revolution (a partial one at the start of a scan, or noise). */
const MIN_NODES = 30;

/**
 * Whether the nodes of a revolution look like one: angles that mostly rise (noise that happens to
 * pass the check bits has random angles and a start flag every few nodes).
 */
function plausible(angles: number[]): boolean {
  if (angles.length < MIN_NODES) return false;
  let rising = 0;
  // Angles are stored counter-clockwise (negated): the sensor's clockwise rise is a fall here.
  for (let i = 1; i < angles.length; i++) if (angles[i]! <= angles[i - 1]!) rising++;
  return rising >= 0.9 * (angles.length - 1);
}
/** Garbage is said on the bus at most this often. */
const NOTICE_MS = 5000;

const failure = (message: string) => new DeviceError('serial', message, { code: 'lidar_failed' });

/**
 * The driver. `connect` opens the port (the process's shared line on it), stops whatever the sensor
 * was doing, asks GET_HEALTH (an error status resets it and fails the open: the next open tries
 * again) and GET_INFO, starts the motor (DTR low on A1/A2M8, SET_MOTOR_PWM on A2M12/A3,
 * MOTOR_SPEED_CTRL on C1/S), sends SCAN and resolves only once a first full revolution arrived. So:
 * unplugged = the open fails; a wrong baud rate = bytes that hold no answer ("wrong baud rate?");
 * a motor that never spins = no revolution within `spin_timeout_ms`; each is a failed open that
 * the session retries with its backoff. While scanning, a malformed node is skipped byte by byte
 * until the stream is in step again (said on `notices$`, at most every 5 s), and a stall of
 * `spin_timeout_ms` without a revolution ends the run (the session reopens it). Closing the link
 * stops the scan and the motor before it lets the port go.
 */
export function createRplidar(config: RplidarConfig, ctx: { logger?: Logger; line?: SerialLine } = {}): LidarSource {
  const line =
    ctx.line ??
    sharedSerialLine(
      {
        binding: 'serialport',
        path: config.port,
        baud_rate: config.baud_rate,
        reopen_initial_ms: config.reopen_initial_ms,
        reopen_max_ms: config.reopen_max_ms,
      },
      ctx.logger ? { logger: ctx.logger } : {},
    );
  const scans = new Subject<Scan>();
  const notices = new Subject<string>();
  const name = `RPLidar on ${config.port}`;

  let dtrSaid = false;
  /** DTR low starts an A1's motor. A port without modem lines (a pty, some adapters) cannot: said once; the spin check decides. */
  const dtr = async (level: boolean) => {
    try {
      await line.set({ dtr: level });
    } catch (err) {
      if (dtrSaid) return;
      dtrSaid = true;
      notices.next(`${name}: cannot set DTR (${describeError(err)}): the driver cannot switch the motor on this port`);
    }
  };
  const motorOn = async () => {
    if (config.motor === 'dtr') await dtr(false);
    else if (config.motor === 'pwm') await line.write(request(CMD.SET_MOTOR_PWM, u16(config.motor_pwm)));
    else if (config.motor === 'speed_ctrl') await line.write(request(CMD.MOTOR_SPEED_CTRL, u16(config.motor_rpm)));
  };
  const motorOff = async () => {
    if (config.motor === 'dtr') await dtr(true);
    else if (config.motor === 'pwm') await line.write(request(CMD.SET_MOTOR_PWM, u16(0)));
    else if (config.motor === 'speed_ctrl') await line.write(request(CMD.MOTOR_SPEED_CTRL, u16(0)));
  };

  const connect = async (signal: AbortSignal): Promise<StreamLink> => {
    const serial = await line.device.connect(signal);
    const end = new LinkEnd();
    const unhearSerial = serial.subscribe((e) => {
      if (e.type === 'close') end.end(e);
    });
    // The revolution being assembled; a revolution is emitted when the next one starts.
    let angles: number[] = [];
    let ranges: number[] = [];
    let quality: number[] = [];
    let lastRevolution = 0;
    let firstRevolution: (() => void) | undefined;
    let waiter: { type: number | 'scan'; resolve: (data: Buffer) => void } | undefined;
    const onEvent = (e: DecoderEvent) => {
      if (!waiter) return;
      if (e.kind === 'scan-start' ? waiter.type === 'scan' : waiter.type === e.type) {
        const w = waiter;
        waiter = undefined;
        w.resolve(e.kind === 'response' ? e.data : Buffer.alloc(0));
      }
    };
    const onNode = (n: ScanNode) => {
      if (n.start && angles.length > 0 && !plausible(angles)) decoder.noise += angles.length * 5;
      else if (n.start && angles.length > 0) {
        const scan: Scan = { at: Date.now(), angles: Float32Array.from(angles), ranges: Float32Array.from(ranges), intensities: Float32Array.from(quality) };
        lastRevolution = Date.now();
        if (firstRevolution) firstRevolution();
        else scans.next(scan);
      }
      if (n.start) {
        angles = [];
        ranges = [];
        quality = [];
      }
      angles.push((-n.angle * Math.PI) / 180);
      ranges.push(n.distanceMm > 0 && n.quality > 0 ? n.distanceMm / 1000 : Number.NaN);
      quality.push(n.quality);
    };
    const decoder = new RplidarDecoder(onEvent, onNode);
    const heard: Subscription = line.bytes().subscribe((chunk) => decoder.push(chunk));
    let watchdog: NodeJS.Timeout | undefined;
    let noticeAt = 0;
    let skipped = 0;

    const teardown = () => {
      clearInterval(watchdog);
      heard.unsubscribe();
      unhearSerial();
    };

    /** Sends `cmd` and waits for the answer of `type` (or the SCAN descriptor). */
    const ask = (cmd: number, type: number | 'scan', what: string): Promise<Buffer> =>
      new Promise<Buffer>((resolve, reject) => {
        decoder.takeNoise();
        const timer = setTimeout(() => {
          waiter = undefined;
          const noise = decoder.takeNoise();
          reject(
            failure(
              noise > 0
                ? `${config.port}: no answer to ${what} at ${config.baud_rate} baud, only ${noise} bytes of noise: wrong baud rate? (${RATES})`
                : `${config.port}: no answer to ${what} within ${config.answer_timeout_ms} ms: is an RPLidar connected and powered?`,
            ),
          );
        }, config.answer_timeout_ms);
        const onAbort = () => {
          clearTimeout(timer);
          reject(failure(`opening ${name} cancelled`));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter = {
          type,
          resolve: (data) => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            resolve(data);
          },
        };
        line.write(request(cmd)).catch((err: unknown) => {
          clearTimeout(timer);
          waiter = undefined;
          reject(DeviceError.from('serial', err));
        });
      });

    try {
      await line.write(request(CMD.STOP));
      decoder.reset();
      const health = parseHealth(await ask(CMD.GET_HEALTH, TYPE.HEALTH, 'GET_HEALTH'));
      if (health.status === 'error') {
        await line.write(request(CMD.RESET)).catch(() => undefined);
        throw failure(`${name} reports a health error (code 0x${health.code.toString(16)}); it was reset and is opened again`);
      }
      if (health.status === 'warning') notices.next(`${name} reports a health warning (code 0x${health.code.toString(16)})`);
      const info = parseInfo(await ask(CMD.GET_INFO, TYPE.INFO, 'GET_INFO'));
      ctx.logger?.info({ lidar: info }, `${name}: ${modelName(info.model)}, firmware ${info.firmware}, hardware ${info.hardware}, serial ${info.serial}`);
      await motorOn();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(failure(`${name}: no full revolution within ${config.spin_timeout_ms} ms after SCAN: the motor does not spin?`)),
          config.spin_timeout_ms,
        );
        firstRevolution = () => {
          clearTimeout(timer);
          firstRevolution = undefined;
          resolve();
        };
        ask(CMD.SCAN, 'scan', 'SCAN').catch((err: unknown) => {
          clearTimeout(timer);
          reject(err);
        });
      });
    } catch (err) {
      teardown();
      await motorOff().catch(() => undefined);
      serial.close();
      throw err;
    }

    lastRevolution = Date.now();
    watchdog = setInterval(
      () => {
        skipped += decoder.takeNoise();
        const now = Date.now();
        if (skipped > 0 && now - noticeAt >= NOTICE_MS) {
          notices.next(`${name}: ${skipped} bytes of garbage skipped (the scan stream resynchronised)`);
          noticeAt = now;
          skipped = 0;
        }
        if (now - lastRevolution > config.spin_timeout_ms) {
          end.end({
            type: 'close',
            code: 1006,
            reason: `${name}: no full revolution for ${config.spin_timeout_ms} ms (the motor stopped or the line is noise)`,
          });
        }
      },
      Math.min(250, config.spin_timeout_ms / 4),
    );
    watchdog.unref();

    let closed = false;
    return {
      bufferedAmount: () => 0,
      subscribe: (listener) => end.subscribe(listener),
      close() {
        if (closed) return;
        closed = true;
        teardown();
        // Stop the scan and the motor while the port is still ours, then let it go.
        void line
          .write(request(CMD.STOP))
          .then(motorOff)
          .catch(() => undefined)
          .finally(() => serial.close());
      },
    };
  };

  const device: OpenableDevice = {
    connect,
    attach: () => () => undefined,
    backoff: { initialMs: config.reopen_initial_ms, maxMs: config.reopen_max_ms },
  };
  return {
    name,
    device,
    scans$: scans.asObservable(),
    notices$: notices.asObservable(),
    end: () => {
      scans.complete();
      notices.complete();
    },
  };
}
