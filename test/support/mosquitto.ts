// A real mosquitto for tests and benchmarks: a free loopback port, a generated config (password file, ACL, TLS listener with an openssl-made CA), kill and restart.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/*
 * Tests and benchmarks only. mosquitto 2.0 (Debian's `mosquitto`) runs in the foreground with a
 * config written here: `allow_anonymous false`, a password file made by `mosquitto_passwd`, an ACL
 * file, persistence in the broker's directory (saved every second, so a SIGKILL loses at most the
 * last second), a plain listener and, with `tls`, a TLS listener whose certificate is signed by a CA
 * made with `openssl` for 127.0.0.1 and localhost. Started as root it stays root (`user root`), so it
 * can write its directory.
 */

export interface BrokerOptions {
  /** User name -> password. */
  users: Record<string, string>;
  /** ACL file text (mosquitto's format); default: every user may read and write everything. */
  acl?: string;
  tls?: boolean;
  /** Extra lines for mosquitto.conf (e.g. `max_queued_messages 10000`). */
  extra?: string[];
  /**
   * A shipped mosquitto.conf (systemd/mosquitto/cortexd.conf) to start from: its files, listeners and
   * save interval are replaced by the harness's, everything else is kept as written.
   */
  baseConf?: string;
  /** Let in clients without credentials (a broker as many are installed); default false. */
  allowAnonymous?: boolean;
}

/** Directives of a base configuration the harness sets itself (paths, ports, logging, user). */
const HARNESS_DIRECTIVES =
  /^\s*(password_file|acl_file|persistence_location|autosave_interval|listener|cafile|certfile|keyfile|log_dest|log_type|user|include_dir)\b/;

export interface Broker {
  port: number;
  url: string;
  tlsPort?: number;
  tlsUrl?: string;
  /** PEM file of the CA that signed the TLS listener's certificate. */
  caFile?: string;
  dir: string;
  pid(): number | undefined;
  /** Everything mosquitto logged since it started (all log types). */
  log(): string;
  /** Resolves when the log has a line matching `re` after `from` characters; rejects after `ms`. */
  waitLog(re: RegExp, ms?: number, from?: number): Promise<void>;
  /** Waits until the persistence file was written after now (the broker saves every second). */
  saved(ms?: number): Promise<void>;
  /** SIGKILL: no will messages, no final save. */
  kill(): Promise<void>;
  /** Starts it again on the same ports with the same files (persistence included). */
  restart(): Promise<void>;
  /** SIGTERM and clean-up of its directory. */
  stop(): Promise<void>;
  /** Resident memory of the broker process, in bytes (from /proc). */
  rss(): number;
}

/** A free loopback TCP port (bound, then released; mosquitto binds it next). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.error?.message ?? r.stderr}`);
}

/** A CA and a server certificate for 127.0.0.1/localhost, made by openssl (EC P-256: fast). */
export function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const f = (n: string) => join(dir, n);
  run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=cortexd test CA',
  ]);
  run('openssl', [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    '/CN=localhost',
  ]);
  writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run('openssl', [
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.crt'),
    '-days',
    '2',
    '-extfile',
    f('san.ext'),
  ]);
  return { ca: f('ca.crt'), cert: f('server.crt'), key: f('server.key') };
}

/** Starts mosquitto; resolves once it logged that it runs. */
export async function startMosquitto(options: BrokerOptions): Promise<Broker> {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-mosquitto-'));
  const passwd = join(dir, 'passwd');
  const acl = join(dir, 'acl');
  const users = Object.entries(options.users);
  writeFileSync(passwd, '', { mode: 0o600 });
  for (const [user, password] of users) run('mosquitto_passwd', ['-b', passwd, user, password]);
  writeFileSync(acl, options.acl ?? 'pattern readwrite #\ntopic readwrite #\n', { mode: 0o600 });
  const port = await freePort();
  const tlsPort = options.tls ? await freePort() : undefined;
  const certs = options.tls ? makeCertificates(dir) : undefined;
  const conf = join(dir, 'mosquitto.conf');
  const base = (options.baseConf ?? '').split('\n').filter((l) => l.trim() && !l.trim().startsWith('#') && !HARNESS_DIRECTIVES.test(l));
  const lines = [
    ...(process.getuid?.() === 0 ? ['user root'] : []),
    ...base,
    'per_listener_settings false',
    `allow_anonymous ${options.allowAnonymous ? 'true' : 'false'}`,
    `password_file ${passwd}`,
    `acl_file ${acl}`,
    'persistence true',
    `persistence_location ${dir}/`,
    'autosave_interval 1',
    'log_dest stderr',
    'log_type all',
    'log_timestamp_format %s',
    ...(options.extra ?? []),
    `listener ${port} 127.0.0.1`,
    ...(certs && tlsPort ? [`listener ${tlsPort} 127.0.0.1`, `cafile ${certs.ca}`, `certfile ${certs.cert}`, `keyfile ${certs.key}`] : []),
  ];
  writeFileSync(conf, `${lines.join('\n')}\n`);

  let child: ChildProcess | undefined;
  let text = '';
  const waiters = new Set<() => void>();
  const spawnBroker = async () => {
    const c = spawn('mosquitto', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = c;
    const from = text.length;
    c.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      for (const w of [...waiters]) w();
    });
    const exited = new Promise<never>((_, reject) =>
      c.once('exit', (code) => reject(new Error(`mosquitto exited (${code}): ${text.slice(from).slice(-2000)}`))),
    );
    await Promise.race([waitLog(/mosquitto version [\d.]+ running/, 10_000, from), exited]);
  };
  const waitLog = (re: RegExp, ms = 10_000, from = 0) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!re.test(text.slice(from))) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`mosquitto log: no ${re} within ${ms} ms`))), ms);
      waiters.add(check);
      check();
    });
  const exit = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  await spawnBroker();
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    ...(tlsPort && certs ? { tlsPort, tlsUrl: `mqtts://127.0.0.1:${tlsPort}`, caFile: certs.ca } : {}),
    dir,
    pid: () => child?.pid,
    log: () => text,
    waitLog,
    saved: (ms = 10_000) => waitLog(/Saving in-memory database/, ms, text.length),
    kill: () => exit('SIGKILL'),
    restart: async () => {
      await exit('SIGKILL');
      await spawnBroker();
    },
    stop: async () => {
      await exit('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
    rss: () => {
      const pid = child?.pid;
      if (!pid || !existsSync(`/proc/${pid}/status`)) return 0;
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : 0;
    },
  };
}

/** True when mosquitto, mosquitto_passwd and openssl are installed (the `tests` package set). */
export function haveMosquitto(): boolean {
  return ['mosquitto', 'mosquitto_passwd', 'openssl'].every((cmd) => {
    for (const d of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin'])) {
      try {
        if (statSync(join(d, cmd)).isFile()) return true;
      } catch {
        /* not here */
      }
    }
    return false;
  });
}

/**
 * A TCP gate in front of a broker: while closed, connections are refused at once (the client sees
 * its link down) and open ones are cut; while open, bytes pass through. Lets a test hold a robot
 * off the broker while commands queue for it.
 */
export interface Gate {
  port: number;
  url: string;
  open(): void;
  /** Refuses new connections and cuts the open ones. */
  close(): void;
  stop(): Promise<void>;
}

export async function startGate(target: { port: number }): Promise<Gate> {
  let isOpen = true;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (!isOpen) return client.destroy();
    const upstream = connect(target.port, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    open: () => {
      isOpen = true;
    },
    close: () => {
      isOpen = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
