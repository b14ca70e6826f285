// `cortexd fleet ls|watch|switch|say|context|estop|release|reload|keygen`: the robots on the broker in CORTEX_MQTT_URL, and commands to them.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CommandBody, FleetCommand, FleetReply } from '../src/fleet/protocol.js';
import type { FleetOperator, RobotListing } from '../src/fleet/operator.js';
import { CortexError } from '../src/errors.js';
import { EXIT, errLine, out, reportError } from './output.js';
import { parseDuration } from './run.js';

interface Common {
  url?: string;
  username?: string;
  caFile?: string;
  prefix?: string;
  json?: boolean;
  timeout?: string;
}

interface SendOpts extends Common {
  ttl?: string;
  reason?: string;
}

const common = (cmd: Command): Command =>
  cmd
    .option('--url <url>', 'broker URL (default $CORTEX_MQTT_URL); the password comes from $CORTEX_MQTT_PASSWORD, never a flag')
    .option('--username <name>', 'user name (default $CORTEX_MQTT_USERNAME)')
    .option('--ca-file <path>', 'CA certificate of the broker (default $CORTEX_MQTT_CA_FILE)')
    .option('--prefix <prefix>', 'topic prefix (default $CORTEX_MQTT_PREFIX or cortexd)')
    .option('--json', 'print JSON instead of text')
    .option('--timeout <duration>', 'how long to wait for the broker and for a reply', '10s');

/** Connects with the flags over the environment; the connection is closed after `fn`, whatever happens. */
async function withOperator(opts: Common, fn: (op: FleetOperator) => Promise<number>): Promise<number> {
  try {
    const [{ FleetOperator, operatorSettings, FleetUsageError }, { configEnvironment }] = await Promise.all([
      import('../src/fleet/operator.js'),
      import('../src/config/env.js'),
    ]);
    let settings: ReturnType<typeof operatorSettings>;
    try {
      settings = operatorSettings(configEnvironment(), opts);
    } catch (err) {
      if (err instanceof FleetUsageError) {
        errLine(`cortexd: ${err.message}`);
        return EXIT.invalid;
      }
      throw err;
    }
    const op = await FleetOperator.connect(settings, parseDuration(opts.timeout ?? '10s'));
    try {
      return await fn(op);
    } finally {
      await op.close();
    }
  } catch (err) {
    return reportError(err);
  }
}

/**
 * A string a robot sent, made safe for the operator's terminal: C0 and C1 control characters, DEL,
 * line and paragraph separators and bidirectional overrides become visible escapes (`\x1b`,
 * `\u202e`), so a robot's state cannot move the cursor, colour the screen, start a new table row or
 * reorder what is printed; cut at `max` characters.
 */
export function printable(value: unknown, max = 200): string {
  const text = typeof value === 'string' ? value : String(value);
  const escaped = text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return escaped.length > max ? `${escaped.slice(0, max)}...` : escaped;
}

function ago(at: number | null): string {
  if (at === null) return 'never';
  const s = Math.max(0, Math.round((Date.now() - at) / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
}

async function printList(robots: RobotListing[], json: boolean): Promise<void> {
  if (json) {
    out(
      JSON.stringify(
        robots.map(({ status: _s, state, ...r }) => ({ ...r, ...(state ? { state } : {}) })),
        null,
        2,
      ),
    );
    return;
  }
  if (robots.length === 0) {
    out('no robots on this broker (no retained status or state under the prefix)');
    return;
  }
  const { default: Table } = await import('cli-table3');
  const table = new Table({ head: ['robot', 'online', 'mode', 'health', 'last seen'], style: { head: [], border: [] } });
  for (const r of robots)
    table.push([printable(r.robot, 64), r.online ? 'yes' : 'no', printable(r.mode ?? '-', 64), printable(r.health, 80), ago(r.last_seen)]);
  out(table.toString());
}

/** One line per fleet message for `watch`. */
function watchLine(robot: string, kind: string, payload: unknown): string {
  const p = payload as Record<string, unknown>;
  const time = new Date().toISOString().slice(11, 19);
  switch (kind) {
    case 'status':
      return `${time} ${robot} ${printable(p.status)}${p.reason ? ` (${printable(p.reason)})` : ''}`;
    case 'state':
      return `${time} ${robot} state: mode ${printable(p.mode)}, health ${p.health && (p.health as { ok?: boolean }).ok ? 'ok' : 'NOT ok'}`;
    case 'events': {
      const { type, at: _at, ...rest } = p;
      return `${time} ${robot} ${String(type)} ${JSON.stringify(rest)}`;
    }
    case 'replies':
      return `${time} ${robot} reply ${printable(p.command)} ${p.ok ? 'ok' : `refused: ${printable(p.reason, 2000)}`}`;
    default:
      return `${time} ${robot} ${kind} ${JSON.stringify(payload)}`;
  }
}

/** Prints a reply (or the lack of one) and returns the exit code: 0 only for ok. */
function report(
  robot: string,
  result: { reply?: FleetReply; command: FleetCommand; status?: { status: string; at?: number | undefined } },
  json: boolean,
  timeoutMs: number,
): number {
  const { reply, command, status } = result;
  if (json) {
    out(JSON.stringify(reply ?? { id: command.id, robot, command: command.command, ok: false, reason: 'no reply', queued_until: command.expires_at }));
    return reply?.ok ? EXIT.ok : EXIT.failure;
  }
  if (!reply) {
    const offline = status?.status === 'offline' ? `${robot} is offline${status.at ? ` (since ${new Date(status.at).toISOString()})` : ''}; ` : '';
    errLine(
      `cortexd: no reply from ${robot} within ${timeoutMs / 1000} s: ${offline}the command stays queued for it until ${new Date(command.expires_at).toISOString()}`,
    );
    return EXIT.failure;
  }
  if (reply.ok) out(`${robot}: ${command.command} ok${reply.reason ? ` (${printable(reply.reason, 2000)})` : ''}`);
  else errLine(`${robot}: ${command.command} refused: ${printable(reply.reason ?? 'no reason given', 2000)}`);
  for (const line of reply.lines ?? []) (reply.ok ? out : errLine)(`  ${printable(line, 2000)}`);
  return reply.ok ? EXIT.ok : EXIT.failure;
}

async function sendCommand(robot: string, body: CommandBody, opts: SendOpts, after?: (op: FleetOperator, reply: FleetReply) => Promise<void>): Promise<number> {
  return withOperator(opts, async (op) => {
    const timeoutMs = parseDuration(opts.timeout ?? '10s');
    const result = await op.send(
      robot,
      { ...body, from: `cortexd fleet (${process.env.USER ?? 'operator'})` },
      { ttlMs: parseDuration(opts.ttl ?? '60s'), timeoutMs },
    );
    const code = report(robot, result, Boolean(opts.json), timeoutMs);
    if (result.reply?.ok && after) await after(op, result.reply);
    return code;
  });
}

function setExit(code: number): void {
  process.exitCode = code;
}

type WatchOpts = Common & { metrics?: boolean; count?: string; for?: string };

/** `fleet watch`: prints each message as it arrives (one robot's, or all) until --count messages, --for, a signal or a lost broker. */
async function watchMessages(op: FleetOperator, robot: string | undefined, opts: WatchOpts): Promise<number> {
  const { checkRobotId } = await import('../src/fleet/operator.js');
  if (robot) checkRobotId(robot);
  const limit = opts.count !== undefined ? Number(opts.count) : Infinity;
  if (!(limit > 0)) throw new CortexError('fleet_usage', `--count must be a positive number, got ${JSON.stringify(opts.count)}`);
  let seen = 0;
  await new Promise<void>((resolve) => {
    const timer = opts.for ? setTimeout(resolve, parseDuration(opts.for)) : undefined;
    const onSignal = () => resolve();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    op.onMessage((m) => {
      if (robot && m.robot !== robot) return;
      out(
        opts.json
          ? JSON.stringify({ robot: m.robot, kind: m.kind, message: m.payload })
          : printable(watchLine(printable(m.robot, 64), m.kind, m.payload), 4000),
      );
      if (++seen >= limit) {
        clearTimeout(timer);
        resolve();
      }
    });
    void op.watch(robot, Boolean(opts.metrics)).catch((err) => {
      reportError(err);
      resolve();
    });
  });
  return EXIT.ok;
}

/** `fleet context`'s KEY=VALUE pairs, typed (numbers, true, false, null), or the first pair that is not one. */
function contextValues(pairs: string[]): { values: Record<string, string | number | boolean | null> } | { bad: string } {
  const values: Record<string, string | number | boolean | null> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) return { bad: pair };
    const v = pair.slice(eq + 1);
    values[pair.slice(0, eq)] =
      v === 'true' ? true : v === 'false' ? false : v === 'null' ? null : v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  return { values };
}

/** `fleet reload`: sends the file (at most MAX_RELOAD_BYTES) and, once accepted, waits for the robot to report running it. */
async function sendReload(robot: string, file: string, opts: SendOpts): Promise<number> {
  let text: Buffer;
  try {
    text = readFileSync(file);
  } catch (err) {
    errLine(`cortexd: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    return EXIT.invalid;
  }
  const { MAX_RELOAD_BYTES } = await import('../src/fleet/protocol.js');
  if (text.length > MAX_RELOAD_BYTES) {
    errLine(`cortexd: ${file} is ${text.length} bytes; a pushed configuration is at most ${MAX_RELOAD_BYTES} bytes`);
    return EXIT.invalid;
  }
  const { sha256Hex } = await import('../src/fleet/operator.js');
  const sha = sha256Hex(text);
  return sendCommand(robot, { command: 'reload', config: text.toString('utf8') }, opts, async (op) => {
    const running = await op.waitForConfig(robot, sha, parseDuration(opts.timeout ?? '10s') * 3);
    if (!opts.json)
      (running ? out : errLine)(
        running ? `${robot} runs the new configuration (sha256 ${sha.slice(0, 12)}...)` : `${robot} has not reported the new configuration yet`,
      );
  });
}

/** `fleet keygen`: writes a new operator's private key (0600, never over an existing file or through a link) and prints its public key. */
async function writeOperatorKey(file: string): Promise<number> {
  const { generateOperatorKey } = await import('../src/fleet/identity.js');
  const { openSync, writeSync, closeSync, constants } = await import('node:fs');
  const key = generateOperatorKey();
  let fd: number;
  try {
    // O_EXCL|O_NOFOLLOW: an existing file or a link is never written through.
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    errLine(`cortexd: cannot create ${file}: ${code === 'EEXIST' ? 'it exists (a key is never overwritten)' : (code ?? String(err))}`);
    return EXIT.invalid;
  }
  writeSync(fd, key.privatePem);
  closeSync(fd);
  errLine(`cortexd: wrote the operator's private key to ${file} (0600); keep it on the operator's machine only`);
  out(key.publicKey);
  return EXIT.ok;
}

/** The commands that send one command to a robot and print its reply. */
function registerSends(fleet: Command): void {
  const sendOptions = (cmd: Command): Command =>
    common(cmd).option('--ttl <duration>', 'the command expires this long after it is sent (the robot refuses it later)', '60s');

  sendOptions(fleet.command('switch').description('switch ROBOT to MODE (the same rules as a manual switch)'))
    .argument('<robot>')
    .argument('<mode>')
    .action(async (robot: string, mode: string, opts: SendOpts) => setExit(await sendCommand(robot, { command: 'switch', mode }, opts)));

  sendOptions(fleet.command('say').description("give ROBOT TEXT as typed input (its current mode's text input)"))
    .argument('<robot>')
    .argument('<text...>')
    .action(async (robot: string, text: string[], opts: SendOpts) => setExit(await sendCommand(robot, { command: 'say', text: text.join(' ') }, opts)));

  sendOptions(fleet.command('context').description('set context values (KEY=VALUE; numbers, true, false and null are typed) for context_aware rules'))
    .argument('<robot>')
    .argument('<pairs...>')
    .action(async (robot: string, pairs: string[], opts: SendOpts) => {
      const parsed = contextValues(pairs);
      if ('bad' in parsed) {
        errLine(`cortexd: not KEY=VALUE: ${JSON.stringify(parsed.bad)}`);
        return setExit(EXIT.invalid);
      }
      setExit(await sendCommand(robot, { command: 'context', values: parsed.values }, opts));
    });

  sendOptions(fleet.command('estop').description('latch the emergency stop of ROBOT'))
    .argument('<robot>')
    .option('--reason <text>', 'why (shown on the robot)')
    .action(async (robot: string, opts: SendOpts) =>
      setExit(await sendCommand(robot, { command: 'estop', ...(opts.reason ? { reason: opts.reason } : {}) }, opts)),
    );

  sendOptions(fleet.command('release').description('release the emergency stop of ROBOT'))
    .argument('<robot>')
    .option('--reason <text>', 'why')
    .action(async (robot: string, opts: SendOpts) =>
      setExit(await sendCommand(robot, { command: 'release', ...(opts.reason ? { reason: opts.reason } : {}) }, opts)),
    );

  sendOptions(fleet.command('reload').description('send FILE to ROBOT as its configuration: checked there first; the old one keeps running when invalid'))
    .argument('<robot>')
    .argument('<file>')
    .action(async (robot: string, file: string, opts: SendOpts) => setExit(await sendReload(robot, file, opts)));
}

export function register(program: Command): void {
  const fleet = program.command('fleet').description('robots on the MQTT broker in $CORTEX_MQTT_URL: list, watch, and send them commands');

  common(fleet.command('ls').description('robots the broker knows: online, mode, health, last seen')).action(async (opts: Common) =>
    setExit(
      await withOperator(opts, async (op) => {
        await printList(await op.list(), Boolean(opts.json));
        return EXIT.ok;
      }),
    ),
  );

  common(fleet.command('watch').description('print status, state, events and replies as they arrive (all robots, or ROBOT)'))
    .argument('[robot]', 'one robot id')
    .option('--metrics', 'also print metrics messages')
    .option('--count <n>', 'stop after N messages')
    .option('--for <duration>', 'stop after this long')
    .action(async (robot: string | undefined, opts: WatchOpts) => setExit(await withOperator(opts, (op) => watchMessages(op, robot, opts))));

  registerSends(fleet);

  fleet
    .command('keygen')
    .description("make an operator's signing key: writes the private key (mode 0600) and prints the public key to list in each robot's fleet.operator_keys")
    .requiredOption('--out <file>', 'where the private key goes (never overwritten); point CORTEX_FLEET_OPERATOR_KEY at it to sign every command')
    .action(async (opts: { out: string }) => {
      const code = await writeOperatorKey(opts.out);
      if (code !== EXIT.ok) setExit(code);
    });
}
