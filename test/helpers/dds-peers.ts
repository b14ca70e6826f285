// Real CycloneDDS peers for tests: a ROS 2 base, a ROS 2 node (String and ColorRGBA topics), a Nav2 goal taker and a Go2, built from test/fixtures/dds with idlc and gcc (cached by source hash under test-output/), run on loopback.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { requireCommands } from './requires.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'dds');
const SOURCES = ['peer.h', 'ros2.idl', 'unitree.idl', 'ros2_base.c', 'ros2_node.c', 'go2.c', 'nav2.c'];

/** CycloneDDS on loopback with multicast (SPDP discovery between processes of this machine only). */
export const LOOPBACK_URI =
  '<CycloneDDS><Domain Id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>';

/** A DDS domain of its own per test file (0..232 are valid; other suites and helpers use the low ones). */
export function freshDomain(): number {
  return 100 + ((process.pid * 7 + Date.now()) % 120);
}

/** Sets this process's environment for loopback DDS on `domain` (before the first participant: CycloneDDS reads it then). */
export function useLoopback(domain: number): void {
  process.env.CYCLONEDDS_URI = LOOPBACK_URI;
  process.env.ROS_DOMAIN_ID = String(domain);
}

/** Builds the peers once per source version; returns their directory. Throws with the fix when idlc or gcc is missing. */
export function buildPeers(): string {
  requireCommands(['idlc', 'gcc']);
  if (!existsSync('/usr/include/dds/dds.h')) throw new Error('CycloneDDS headers missing: apt-get install cyclonedds-dev (bash scripts/setup.sh --tests)');
  const hash = createHash('sha256');
  for (const f of SOURCES) hash.update(readFileSync(join(FIXTURES, f)));
  const out = join(ROOT, 'test-output', 'dds-peers', hash.digest('hex').slice(0, 12));
  if (['go2', 'ros2_base', 'ros2_node', 'nav2'].every((p) => existsSync(join(out, p)))) return out;
  mkdirSync(join(ROOT, 'test-output', 'dds-peers'), { recursive: true });
  // Built in a directory of its own and renamed into place: two test files building at once do not collide.
  const tmp = mkdtempSync(join(ROOT, 'test-output', 'dds-peers', 'build-'));
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { cwd: tmp, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed:\n${r.stderr}${r.stdout}`);
  };
  run('idlc', ['-x', 'final', join(FIXTURES, 'ros2.idl')]);
  run('idlc', ['-x', 'final', join(FIXTURES, 'unitree.idl')]);
  const cc = ['-O1', '-Wall', '-I.', `-I${FIXTURES}`];
  run('gcc', [...cc, '-o', 'ros2_base', join(FIXTURES, 'ros2_base.c'), 'ros2.c', '-lddsc', '-lm']);
  run('gcc', [...cc, '-o', 'ros2_node', join(FIXTURES, 'ros2_node.c'), 'ros2.c', '-lddsc', '-lm']);
  run('gcc', [...cc, '-o', 'nav2', join(FIXTURES, 'nav2.c'), 'ros2.c', '-lddsc', '-lm']);
  run('gcc', [...cc, '-o', 'go2', join(FIXTURES, 'go2.c'), 'unitree.c', '-lddsc', '-lm']);
  try {
    renameSync(tmp, out);
  } catch {
    // Another file built the same version first: theirs is used.
  }
  return out;
}

export interface Peer {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line (from the start) matching `re`, or rejects after `ms` naming what was awaited. */
  waitLine(re: RegExp, ms?: number, from?: number): Promise<string>;
  /** Stops it (SIGTERM: a clean DDS exit; SIGKILL: a robot unplugged). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts peer `name` (`ros2_base`, `ros2_node`, `nav2` or `go2`) on `domain`, loopback, with its further arguments (ros2_base: the wall's x); resolves once it printed `ready`. */
export async function startPeer(name: 'ros2_base' | 'ros2_node' | 'go2' | 'nav2', domain: number, args: string[] = []): Promise<Peer> {
  const dir = buildPeers();
  const child = spawn(join(dir, name), [String(domain), ...args], {
    env: { ...process.env, CYCLONEDDS_URI: LOOPBACK_URI },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let err = '';
  const waiters: Array<{ re: RegExp; from: number; resolve: (l: string) => void }> = [];
  let buf = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) if (lines.length - 1 >= w.from && w.re.test(line)) waiters.splice(waiters.indexOf(w), 1), w.resolve(line);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const peer: Peer = {
    child,
    lines,
    waitLine(re, ms = 15_000, from = 0) {
      const hit = lines.slice(from).find((l) => re.test(l));
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} printed no line matching ${re} within ${ms} ms; stderr: ${err}`)), ms);
        waiters.push({ re, from, resolve: (l) => (clearTimeout(timer), resolve(l)) });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  await peer.waitLine(/^ready$/, 15_000);
  return peer;
}
