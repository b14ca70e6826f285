// HIL: serial ports on the one reconnect engine, over socat ptys whose peer is killed mid-stream and brought back: a GPS input's `device:serial` session and the safety e-stop watcher's.
import t from 'tap';
import { pino } from 'pino';
import { createActor, enqueueActions, setup, type AnyActorRef } from 'xstate';
import { GpsInput, GpsInputSchema } from '../../actors/inputs/gps-input.js';
import { serialConfigOf } from '../../actors/inputs/serial-reader.js';
import { createSerialLine, sharedSerialLine } from '../../devices/serial.js';
import { formatNmea } from '../../devices/nmea.js';
import { estopSerialLogic, type HoldSerialSession } from '../../actors/safety/estop-serial.js';
import { streamSessionMachine } from '../../actors/streams/session-machine.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { hostInput } from '../helpers/input-host.js';
import { ptyPair } from '../helpers/socat-pty.js';

t.setTimeout(120_000);

type StreamEv = Extract<AgentEvent, { type: 'stream' }>;

async function until<T>(what: string | (() => string), fn: () => T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const gga = (lat: string) => `${formatNmea('GPGGA', ['123519', lat, 'N', '01131.000', 'E', 1, '08', '0.9', '545.4', 'M', '46.9', 'M', '', ''])}\r\n`;

t.test('a GPS whose pty peer dies mid-stream: its device:serial session reopens the port with the backoff and fixes flow again', async (t) => {
  const pty = await ptyPair(t.teardown);
  const config = GpsInputSchema.parse({ path: pty.robot, baud_rate: 115200, reopen_initial_ms: 50, reopen_max_ms: 400 });
  const serial = createSerialLine(serialConfigOf(config));
  const host = hostInput('GpsInput', () => new GpsInput(config, serial));
  t.teardown(() => host.stop());
  const states = () => host.events.filter((e): e is StreamEv => e.type === 'stream' && e.kind === 'serial');
  const fixes = () => host.messages.map((m) => m.text);

  await until('the device:serial child', () => (host.ref().getSnapshot().children as Record<string, AnyActorRef>)['device:serial']);
  await until('the port open', () => serial.port()?.isOpen);
  pty.write(gga('4807.038'));
  await until(
    () => `a first fix (messages: ${fixes().join(' | ')})`,
    () => fixes().some((f) => f.includes('48.117300')),
  );

  await pty.unplug();
  const outage = await until(
    () =>
      `a backingOff state (serial states: ${states()
        .map((s) => s.state)
        .join(', ')})`,
    () => states().find((s) => s.state === 'backingOff'),
  );
  t.match(outage.reason, /robot/, `the outage names the port: ${outage.reason}`);
  const openWhileUnplugged = serial.port();
  t.equal(openWhileUnplugged, undefined, 'no port is open while the device is gone');

  // Counted before the replug: the session may open the port again before plug() has seen both links.
  const seen = states().length;
  await pty.plug();
  const plugged = Date.now();
  await until('streaming again', () =>
    states()
      .slice(seen)
      .some((s) => s.state === 'streaming'),
  );
  // A figure, not an assertion (reopen_max_ms is 400 here): how soon the replugged port was open again.
  t.comment(`port open again ${Date.now() - plugged} ms after the replug`);
  pty.write(gga('4810.000'));
  await until(
    () => `a fix after the replug (messages: ${fixes().join(' | ')})`,
    () => fixes().some((f) => f.includes('48.166667')),
  );

  const sequence = states().map((s) => s.state);
  t.equal(sequence[0], 'connecting', 'spawned connecting');
  t.equal(sequence[1], 'streaming', 'then open');
  t.ok(sequence.indexOf('backingOff') > 1, `the outage is seen: ${sequence.join(', ')}`);
  t.equal(sequence.at(-1), 'streaming', 'and the recovery');
  t.notOk(sequence.includes('failed'), 'a missing port is never fatal');
  const errors = host.events.filter((e) => e.type === 'error').map((e) => (e as { message: string }).message);
  t.ok(
    errors.some((m) => /the device is reopened in \d+ ms/.test(m)),
    `each backoff is also an error on the bus: ${errors.join(' | ')}`,
  );
  t.equal(host.ref().getSnapshot().hasTag('listening'), true, 'the input listened through the outage (one retry layer: the session)');

  host.stop();
  await until('the port closed with the input', () => serial.port() === undefined);
  t.equal(states().at(-1)?.state, 'stopped', 'stopped on the bus');
});

t.test('a peer that dies right after a write (serialport hears no hang-up): the vanished path ends the link', async (t) => {
  const pty = await ptyPair(t.teardown);
  const serial = createSerialLine({ binding: 'serialport', path: pty.robot, baud_rate: 115200 });
  const link = await serial.device.connect(new AbortController().signal);
  t.teardown(() => link.close(1000, 'test'));
  const closes: string[] = [];
  link.subscribe((e) => e.type === 'close' && closes.push(e.reason));
  // No wait between the write and the kill: the case where the port's read never fails.
  pty.write('$GPGGA\r\n');
  await pty.unplug();
  await until('the link closed', () => closes.length > 0);
  t.match(closes[0], /robot (is gone|closed) \(unplugged\?\)/, `closed: ${closes[0]}`);
  t.equal(serial.port(), undefined, 'no port is held open');
});

t.test('the e-stop watcher holds the shared port with its own session: an outage is on the bus, and ESTOP after the replug still latches', async (t) => {
  const pty = await ptyPair(t.teardown);
  const bus = new AgentBus();
  const events: AgentEvent[] = [];
  bus.events$.subscribe((e) => events.push(e));
  const got: Array<{ type: string; reason?: string }> = [];
  const policy = { binding: 'serialport' as const, path: pty.robot, baudRate: 115200, sentence: 'ESTOP', releaseSentence: 'RELEASE' };
  // The first holder's settings apply to the shared line: fast reopens for the test.
  const line = sharedSerialLine({ binding: 'serialport', path: pty.robot, baud_rate: 115200, reopen_initial_ms: 50, reopen_max_ms: 400 });
  // The governor's part: it spawns the session the watcher asks for as its child `device:serial`.
  const parent = setup({ actors: { watcher: estopSerialLogic, deviceSession: streamSessionMachine } }).createMachine({
    invoke: { src: 'watcher', input: { policy, logger: pino({ level: 'silent' }), bus } },
    on: {
      'safety.serial.hold': {
        actions: enqueueActions(({ enqueue, event }) =>
          enqueue.spawnChild('deviceSession', { id: 'device:serial', input: (event as HoldSerialSession).input }),
        ),
      },
      '*': { actions: ({ event }) => void got.push(event as { type: string }) },
    },
  });
  const actor = createActor(parent).start();
  t.teardown(() => actor.stop());
  const states = () => events.filter((e): e is StreamEv => e.type === 'stream' && e.kind === 'serial' && e.input === 'safety');

  await until('the port open', () => line.port()?.isOpen);
  t.ok(actor.getSnapshot().children['device:serial'], "the port's session is the parent's child device:serial");
  pty.write('ESTOP\n');
  await until('an e-stop', () => got.some((e) => e.type === 'safety.estop'));
  await pty.unplug();
  await until('a backingOff state', () => states().some((s) => s.state === 'backingOff'));
  await pty.plug();
  await until('the port open again', () => line.port()?.isOpen);
  pty.write('RELEASE\nESTOP\n');
  await until('a second e-stop', () => got.filter((e) => e.type === 'safety.estop').length === 2);
  t.ok(
    got.some((e) => e.type === 'safety.release'),
    'the release came through too',
  );
  const sequence = states().map((s) => s.state);
  t.equal(sequence[0], 'connecting');
  t.ok(sequence.includes('backingOff') && sequence.at(-1) === 'streaming', `outage and recovery on the bus: ${sequence.join(', ')}`);
  actor.stop();
  t.equal(states().at(-1)?.state, 'stopped', 'the watcher stopping says so');
  await until('the port closed with the watcher', () => line.port() === undefined);
});
