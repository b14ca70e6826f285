// Proves the action actor's stop order on serialport's mock binding: a motion connector is halted and its STOP written before its device:serial session closes the port.
import t from 'tap';
import { pino } from 'pino';
import { SerialPortMock } from 'serialport';
import { filter, firstValueFrom } from 'rxjs';
import { createActionHandle } from '../../actors/actions/action.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { sharedSerialLine } from '../../devices/serial.js';
import { actionEntry, allActionPlugins } from '../helpers/plugins.js';
import { startGovernor } from '../helpers/governor.js';
import { onBus, until } from '../helpers/wait.js';

t.test('stopping a move action on the serial connector: STOP is written, and only then is the port closed', async (t) => {
  // The mock binding's port records what was written to it, and refuses a write once the port closed:
  // a port closed before the STOP's write went out loses it (as a real port may).
  SerialPortMock.binding.createPort('/dev/MOTOR_HALT', { record: true });
  t.teardown(() => SerialPortMock.binding.reset());
  const bus = new AgentBus();
  const governor = startGovernor({ deadman_seconds: 600 }, { bus });
  t.teardown(() => governor.stop());
  const line = sharedSerialLine({ binding: 'mock', path: '/dev/MOTOR_HALT', baud_rate: 115200 });
  const entry = actionEntry('move', 'serial', { binding: 'mock', path: '/dev/MOTOR_HALT' });
  const deps = { logger: pino({ level: 'silent' }), bus, mode: 'm', stateDir: '/nonexistent', write: () => {}, plugins: await allActionPlugins() };
  const handle = createActionHandle(entry, deps, { safety: governor.actor });
  await firstValueFrom(line.open$.pipe(filter(Boolean)));
  const controller = (line.port() as SerialPortMock).port!;
  const written = () => controller.recording.toString();

  const done = onBus(bus, (e) => e.type === 'action' && e.state === 'done', 'the move done');
  handle.dispatch({ action: 'turn left' }, 'model');
  await until('MOVE on the port', () => written().includes('MOVE turn left\n'));
  controller.emitData('OK\n');
  await done;

  const states: string[] = [];
  bus.events$.subscribe((e: AgentEvent) => e.type === 'stream' && e.kind === 'serial' && states.push(e.state));
  await handle.stop();
  await firstValueFrom(line.open$.pipe(filter((open) => !open)));
  t.equal(line.port(), undefined, 'the port closed with the action');
  t.equal(written(), 'MOVE turn left\nSTOP\n', 'the STOP was written before the port closed');
  t.same(states, ['stopped'], 'the session said stopped');
});
