// The RTSP microphone: the audio of an RTSP stream decoded by ffmpeg to mono PCM, as a device a session actor opens (one ffmpeg run is one link).
import { spawn } from 'node:child_process';
import { Subject, type Observable } from 'rxjs';
import type { Logger } from 'pino';
import { DeviceError } from './device-error.js';
import { LinkEnd, type OpenableDevice } from './device-link.js';
import { KEPT_OUTPUT, lastLine } from '../src/device-output.js';
import type { StreamLink } from '../src/cloud/link.js';
import type { Microphone } from './microphone-interface.js';
import type { RtspMicrophoneConfig } from '../src/plugins/schemas/devices.js';

/** The close code of a link whose ffmpeg ended (the engine says the reason as it is). */
const FFMPEG_ENDED = 1006;

/** The URL with any password replaced: what is logged and said. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/**
 * ffmpeg's arguments: the stream's first audio track as mono s16le PCM at `rate` on stdout. With
 * `listen`, ffmpeg is the RTSP server the source publishes to (`-rtsp_flags listen`); otherwise it
 * pulls the stream from the source's server (over TCP, which survives lossy links).
 */
export function ffmpegArgs(config: Pick<RtspMicrophoneConfig, 'url' | 'listen' | 'rate'>): string[] {
  return [
    '-hide_banner',
    '-loglevel',
    'error',
    '-nostdin',
    ...(config.listen ? ['-rtsp_flags', 'listen'] : ['-rtsp_transport', 'tcp']),
    '-i',
    config.url,
    '-vn',
    '-ac',
    '1',
    '-ar',
    String(config.rate),
    '-f',
    's16le',
    'pipe:1',
  ];
}

interface RtspLink extends StreamLink {
  readonly pcm$: Observable<Buffer>;
}
const isRtspLink = (link: StreamLink): link is RtspLink => 'pcm$' in link;

/** Starts ffmpeg once; resolves when it has spawned, rejects (typed) when it cannot run or `signal` aborts first. */
function openStream(config: RtspMicrophoneConfig, signal: AbortSignal, logger: Logger | undefined): Promise<RtspLink> {
  return new Promise<RtspLink>((resolve, reject) => {
    if (signal.aborted) return reject(new DeviceError('microphone', 'opening cancelled'));
    const shown = redactUrl(config.url);
    const proc = spawn(config.ffmpeg, ffmpegArgs(config), { stdio: ['ignore', 'pipe', 'pipe'] });
    const pcm$ = new Subject<Buffer>();
    const ends = new LinkEnd();
    let output = '';
    let spawned = false;
    let closing = false;
    proc.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-KEPT_OUTPUT)));
    proc.stdout.on('data', (chunk: Buffer) => pcm$.next(chunk));
    const kill = () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    };
    const onAbort = () => {
      closing = true;
      kill();
      reject(new DeviceError('microphone', 'opening cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    proc.once('spawn', () => {
      spawned = true;
      signal.removeEventListener('abort', onAbort);
      resolve(link);
    });
    proc.on('error', (err: NodeJS.ErrnoException) => {
      if (spawned) return;
      signal.removeEventListener('abort', onAbort);
      closing = true;
      reject(
        err.code === 'ENOENT'
          ? new DeviceError('microphone', `${config.ffmpeg} is not installed (not found on PATH): the RTSP microphone decodes with ffmpeg`, {
              code: 'microphone_no_recorder',
              cause: err,
              fatal: true,
            })
          : DeviceError.from('microphone', err, `cannot run ${config.ffmpeg}`),
      );
    });
    proc.once('close', (code: number | null, sig: NodeJS.Signals | null) => {
      pcm$.complete();
      if (closing || !spawned) return;
      const last = lastLine(output);
      const how = sig ? `was stopped (${sig})` : `exited with code ${String(code)}`;
      const reason = `ffmpeg reading ${shown} ${how}${last ? `: ${last.replaceAll(config.url, shown)}` : ''}`;
      if (output.trim()) logger?.debug({ device_output: output.trim().replaceAll(config.url, shown) }, 'rtsp microphone output');
      ends.end({ type: 'close', code: FFMPEG_ENDED, reason });
    });
    const link: RtspLink = {
      pcm$: pcm$.asObservable(),
      bufferedAmount: () => 0,
      subscribe: (listener) => ends.subscribe(listener),
      close() {
        closing = true;
        kill();
      },
    };
  });
}

/**
 * The `rtsp` binding (OM1's RTSP audio inputs): ffmpeg runs while a session actor holds the device
 * open and is reopened with the engine's backoff when the stream ends. `pcm()` is hot.
 */
export function createRtspMicrophone(config: RtspMicrophoneConfig, logger?: Logger): Microphone {
  const heard = new Subject<Buffer>();
  const device: OpenableDevice = {
    connect: (signal) => openStream(config, signal, logger),
    attach: (link) => {
      if (!isRtspLink(link)) throw new DeviceError('microphone', 'not an RTSP link');
      const sub = link.pcm$.subscribe((pcm) => heard.next(pcm));
      return () => sub.unsubscribe();
    },
    backoff: { initialMs: config.restart_initial_ms, maxMs: config.restart_max_ms },
  };
  return { binding: 'rtsp', rate: config.rate, hearsPage: false, device, pcm: () => heard.asObservable() };
}
