// A socat pseudo-terminal pair standing in for a serial device: the robot's end, the device's end, and a peer that can be killed and brought back (an unplug and a replug).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './wait.js';

export interface PtyPair {
  /** The path the robot opens. */
  robot: string;
  /** The device's end. */
  peer: string;
  /** Writes `text` to the device's end (open, write, close). */
  write(text: string): void;
  /** Kills socat (both ends vanish) and resolves once it exited. */
  unplug(): Promise<void>;
  /** Starts socat again on the same paths and resolves once both links exist. */
  plug(): Promise<void>;
}

/** Starts a pair; `teardown` is given its stop (tap's `t.teardown`). */
export async function ptyPair(teardown: (fn: () => Promise<void>) => void, ms = 10_000): Promise<PtyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-pty-'));
  const robot = join(dir, 'robot');
  const peer = join(dir, 'peer');
  let proc: ChildProcess | undefined;
  const stop = () =>
    new Promise<void>((resolve) => {
      const p = proc;
      proc = undefined;
      if (!p || p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once('exit', () => resolve());
      p.kill();
    });
  const plug = async () => {
    proc = spawn('socat', [`pty,raw,echo=0,link=${robot}`, `pty,raw,echo=0,link=${peer}`], { stdio: 'ignore' });
    await until('the pty pair', () => existsSync(robot) && existsSync(peer), ms);
  };
  teardown(stop);
  await plug();
  return {
    robot,
    peer,
    write(text) {
      const fd = openSync(peer, 'w');
      writeSync(fd, text);
      closeSync(fd);
    },
    unplug: stop,
    plug,
  };
}
