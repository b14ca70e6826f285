// `cortexd run --inspect` with three owners of serial ports on socat ptys (a GPS background, the move connector, the safety e-stop watcher): each port's session is a `device:serial` child of its owner in the one tree, and an unplug and replug is on the bus as `stream` `serial` backingOff then streaming for each owner.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import type { AgentEvent } from '../../src/cortex/events.js';
import { built, startAgent, workDir } from '../helpers/agent-process.js';
import { ptyPair } from '../helpers/socat-pty.js';
import { formatNmea } from '../../devices/nmea.js';
import { inspectServer } from '../helpers/inspect-server.js';
import { streams } from '../helpers/bus-events.js';

t.setTimeout(120_000);

const gga = (lat: string) => `${formatNmea('GPGGA', ['123519', lat, 'N', '01131.000', 'E', 1, '08', '0.9', '545.4', 'M', '46.9', 'M', '', ''])}\r\n`;

/** One mode: the GPS board is a background, the motor controller (move) also carries the e-stop sentence. */
const config = (motor: string, gps: string) =>
  JSON.stringify({
    version: 'v1.0.5',
    name: 'serial-tree',
    default_mode: 'drive',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    api_key: 'k',
    system_governance: 'obey',
    service: { base_url: 'http://127.0.0.1:9' },
    cortex_llm: { type: 'LocalLLM', config: { base_url: 'http://127.0.0.1:9/v1', retry: false, timeout_seconds: 2 } },
    modes: {
      drive: {
        display_name: 'Drive',
        description: 'd',
        system_prompt_base: 'drive',
        hertz: 1,
        agent_inputs: [],
        backgrounds: [{ type: 'GpsInput', config: { serial_port: gps, reopen_initial_ms: 50, reopen_max_ms: 400 } }],
        agent_actions: [{ name: 'move', llm_label: 'move', connector: 'serial', config: { path: motor } }],
      },
    },
    safety: { estop_socket: { enabled: false }, estop_serial: { path: motor } },
  });

t.test(
  'each serial session is a device:serial child of its owner, and each owner says its outage and recovery on the bus',
  { skip: !built && 'run `npm run build` first' },
  async (t) => {
    const { url, msgs } = await inspectServer(t.teardown);

    const motor = await ptyPair(t.teardown);
    const gps = await ptyPair(t.teardown);
    const w = workDir();
    const file = w.file('serial-tree.json');
    writeFileSync(file, config(motor.robot, gps.robot));
    const agent = startAgent(file, w.state, ['--inspect', url, '--for', '60s']);
    t.teardown(() => void agent.child.kill('SIGKILL'));

    const owners = ['safety', 'move', 'GpsInput'];
    const serial =
      (owner: string, state: string, after = 0) =>
      (e: AgentEvent) =>
        e.type === 'stream' && e.kind === 'serial' && e.input === owner && e.state === state && e.at >= after;
    for (const owner of owners) await agent.waitFor(serial(owner, 'streaming'), 20_000, `${owner}'s port streaming`);
    // A fix read through the GPS background: its port is being read when the peer goes away.
    gps.write(gga('4807.038'));
    const fix = (after: number) => (e: AgentEvent) => e.type === 'context' && e.source === 'background.GpsInput' && e.values.gps_fix === true && e.at >= after;
    await agent.waitFor(fix(0), 20_000, 'a GPS fix through the background');
    // Not a timing assertion: a pty whose socat dies while a line is still in flight is never seen to
    // close by serialport's poller (the port stays "open"); a real unplug is an EIO. Let the line land.
    await new Promise((r) => setTimeout(r, 200));

    // The peers go away (an unplug of both boards): every owner's session backs off.
    const unpluggedAt = Date.now();
    await Promise.all([motor.unplug(), gps.unplug()]);
    for (const owner of owners) await agent.waitFor(serial(owner, 'backingOff', unpluggedAt), 20_000, `${owner}'s session backing off`);
    const pluggedAt = Date.now();
    await Promise.all([motor.plug(), gps.plug()]);
    for (const owner of owners) await agent.waitFor(serial(owner, 'streaming', pluggedAt), 20_000, `${owner}'s port streaming again`);
    gps.write(gga('4810.000'));
    await agent.waitFor(fix(pluggedAt), 20_000, 'a GPS fix after the replug');

    // The e-stop sentence still latches on the reopened motor port.
    motor.write('ESTOP\n');
    await agent.waitFor((e) => e.type === 'safety' && e.kind === 'estop' && e.source === 'serial', 20_000, 'the e-stop after the replug');

    agent.child.kill('SIGTERM');
    t.equal(await agent.exited, 0);

    const states = (owner: string) => streams(agent.events, 'serial', owner).map((e) => e.state);
    for (const owner of owners) {
      const seq = states(owner);
      t.ok(seq.indexOf('backingOff') > seq.indexOf('streaming') && seq.lastIndexOf('streaming') > seq.indexOf('backingOff'), `${owner}: ${seq.join(', ')}`);
      t.notOk(seq.includes('failed'), `${owner} never failed`);
      t.equal(seq.at(-1), 'stopped', `${owner} says stopped when the agent stops`);
    }

    const actors = msgs.filter((m) => m.type === '@xstate.actor');
    const byId = new Map(actors.map((a) => [a.sessionId, a]));
    t.same([...new Set(actors.map((a) => a.rootId))], [actors[0]!.sessionId], `all ${actors.length} actors share one root`);
    t.equal(actors[0]!.name, 'cortexd');
    const parents = actors
      .filter((a) => a.name === 'device:serial')
      .map((a) => byId.get(a.parentId!)?.name)
      .sort();
    t.same(parents, ['action:move', 'background:GpsInput', 'safety'], 'one device:serial under each owner: the governor, the move action, the GPS background');
  },
);
