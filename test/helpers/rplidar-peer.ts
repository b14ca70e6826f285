// Starts test/support/rplidar-peer.mjs (the stand-in RPLidar, a separate program) on a pty pair's device end, and talks to it on its stdin.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from './wait.js';

const PEER = fileURLToPath(new URL('../support/rplidar-peer.mjs', import.meta.url));

export interface RplidarPeer {
  /** Everything it printed (`ready`, `cmd GET_HEALTH`, `unplugged`...). */
  out(): string;
  /** One control line (`room {...}`, `garbage 200`, `spin off`, `baud wrong`); resolves once it acknowledged. */
  tell(line: string): Promise<void>;
  exited(): Promise<void>;
  stop(): Promise<void>;
}

export interface BoxRoom {
  front?: number;
  back?: number;
  left?: number;
  right?: number;
}

export async function startRplidarPeer(ptyPeer: string, room: BoxRoom, teardown: (fn: () => Promise<void>) => void): Promise<RplidarPeer> {
  const proc: ChildProcess = spawn(process.execPath, [PEER, ptyPeer, JSON.stringify(room)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill();
    await gone;
  };
  teardown(stop);
  await until(
    () => `the RPLidar peer ready (out: ${out} err: ${err})`,
    () => out.includes('ready') || proc.exitCode !== null,
  );
  if (proc.exitCode !== null) throw new Error(`the RPLidar peer exited: ${err}`);
  return {
    out: () => out,
    async tell(line) {
      const word = line.split(' ')[0]!;
      const before = out.split(`ok ${word}`).length - 1;
      proc.stdin!.write(`${line}\n`);
      await until(`the peer to acknowledge "${line}"`, () => out.split(`ok ${word}`).length - 1 > before);
    },
    exited: () => gone,
    stop,
  };
}
