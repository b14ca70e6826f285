// Proves the battery board's line parser (JSON and plain readings, blank lines ignored, bad lines named) and BatteryInput's serial binding on a mock port.
import t from 'tap';
import { parseBatteryLine } from '../../actors/inputs/battery-line.js';
import type { Logger } from 'pino';
import { SerialPortMock } from 'serialport';
import { BatteryInput, BatteryInputSchema, type BatteryReading } from '../../actors/inputs/battery-input.js';
import { createSerialLine } from '../../devices/serial.js';
import { createActor } from 'xstate';
import { streamSessionLogic, type SessionInput } from '../../actors/streams/session-machine.js';
import { serialConfigOf } from '../../src/plugins/schemas/inputs.js';
import { mockSerialPaths, simulateConfig } from '../../src/config/simulate.js';
import { waitFor } from '../helpers/wait.js';

t.test('JSON and plain readings', async (t) => {
  t.same(parseBatteryLine('{"percent":78,"charging":false}'), { percent: 78, charging: false });
  t.same(parseBatteryLine('{"percent":99.6,"charging":true}\r'), { percent: 100, charging: true });
  t.same(parseBatteryLine('{"percent":5}'), { percent: 5, charging: false });
  t.same(parseBatteryLine('BAT 78'), { percent: 78, charging: false });
  t.same(parseBatteryLine('  bat 15 chg '), { percent: 15, charging: true });
  t.same(parseBatteryLine('BAT 0'), { percent: 0, charging: false });
  t.equal(parseBatteryLine(''), undefined, 'a blank line is no reading and no error');
  t.equal(parseBatteryLine('  \r'), undefined);
});

t.test('bad lines say why', async (t) => {
  t.match(parseBatteryLine('{"percent":78,'), /bad JSON/);
  t.match(parseBatteryLine('{"percent":"78"}'), /"percent" must be a number 0\.\.100/);
  t.match(parseBatteryLine('{"percent":140}'), /"percent" must be a number/);
  t.match(parseBatteryLine('{"percent":40,"charging":"yes"}'), /"charging" must be true or false/);
  t.match(parseBatteryLine('BAT 101'), /expected BAT <0\.\.100> \[CHG\]/);
  t.match(parseBatteryLine('BAT -3'), /expected BAT/);
  t.match(parseBatteryLine('BAT 50 FULL'), /expected BAT/);
  t.match(parseBatteryLine('\u0000\u00ffgarbage'), /not a battery reading/);
  t.ok((parseBatteryLine(`BAT ${'9'.repeat(500)}`) as string).length < 200, 'a long line is cut in the message');
});

t.test('the serial binding needs its port; sysfs stays the default', async (t) => {
  t.equal(BatteryInputSchema.parse({}).binding, 'sysfs');
  const r = BatteryInputSchema.safeParse({ binding: 'serial' });
  t.notOk(r.success);
  t.match(r.error?.issues[0], { path: ['serial_port'], message: /needs serial_port/ });
  t.match(BatteryInputSchema.parse({ binding: 'serial', serial_port: '/dev/ttyUSB1' }), {
    serial_binding: 'serialport',
    baud_rate: 9600,
    path: '/sys/class/power_supply',
  });
});

t.test('the serial binding on a mock port: readings publish the sysfs context keys, bad lines are counted and logged once', async (t) => {
  SerialPortMock.binding.createPort('/dev/BATMOCK');
  t.teardown(() => SerialPortMock.binding.reset());
  const config = BatteryInputSchema.parse({ binding: 'serial', serial_port: '/dev/BATMOCK', serial_binding: 'mock' });
  const serial = createSerialLine(serialConfigOf({ ...config, binding: config.serial_binding }));
  const warnings: string[] = [];
  const contexts: Array<Record<string, unknown>> = [];
  const logger = { warn: (m: string) => warnings.push(m) } as unknown as Logger;
  const input = new BatteryInput(config, { logger, signal: new AbortController().signal, publishContext: (v) => void contexts.push(v) }, undefined, serial);
  // The port's session, as the input actor runs it (child `device:serial`).
  const device = createActor(streamSessionLogic(), { input: input.device!.input as SessionInput }).start();
  t.teardown(() => device.stop());
  const readings: BatteryReading[] = [];
  const finals: boolean[] = [];
  const sub = input.listen().subscribe((r) => (readings.push(r), finals.push(Boolean(input.rawToText(r)?.final))));
  const port = (await waitFor(() => serial.port())) as SerialPortMock;
  port.port!.emitData('BAT 78 CHG\nnoise\n{"percent":78,"charging":true}\n\n{"percent":"x"}\nBAT 15\n');
  await waitFor(() => (readings.length === 2 ? true : undefined));
  t.same(contexts, [
    { battery_percent: 78, battery_status: 'Charging', battery_charging: true, battery_low: false },
    { battery_percent: 15, battery_status: 'Discharging', battery_charging: false, battery_low: true },
  ]);
  t.same(finals, [false, true], 'a low battery wakes the loop, as with sysfs');
  t.equal(input.formattedLatestBuffer(), 'Battery: 15% (Discharging, low)');
  t.equal(input.reads, 3, 'the repeated 78 % reading is read, not re-emitted');
  t.equal(input.rejected, 2);
  t.equal(warnings.length, 1);
  t.match(warnings[0], /battery: \/dev\/BATMOCK: not a battery reading .*"noise".*further bad lines are only counted/);
  sub.unsubscribe();
  await input.stop();
});

t.test('--simulate puts a serial battery board on a mock port and makes that port, and a sysfs battery on the simulated one', async (t) => {
  const bg = { type: 'BatteryInput', config: { binding: 'serial', serial_port: '/dev/ttyBAT' } };
  const sysfs = { type: 'BatteryInput', config: {} };
  const sim = simulateConfig({ modes: { m: { agent_inputs: [sysfs], backgrounds: [bg], agent_actions: [] } } });
  t.match(sim.lines.join('\n'), /modes\.m\.backgrounds\[0\]: BatteryInput serial port \/dev\/ttyBAT -> a mock port/);
  const modes = sim.config.modes as Parameters<typeof mockSerialPaths>[0]['modes'];
  t.equal(modes.m!.backgrounds![0]!.config.serial_binding, 'mock');
  t.match(modes.m!.agent_inputs[0]!.config, { path: /config\/media\/power_supply$/ }, 'the sysfs binding reads the simulated battery');
  t.match(sim.lines.join('\n'), /modes\.m\.agent_inputs\[0\]: BatteryInput \/sys\/class\/power_supply -> a simulated battery/);
  t.same(mockSerialPaths({ modes }), ['/dev/ttyBAT']);
});
