// Proves the battery board's line parser: JSON and plain readings, blank lines ignored, bad lines named with the reason.
import t from 'tap';
import { parseBatteryLine } from '../../actors/inputs/battery-line.js';
import { BatteryInputSchema } from '../../actors/inputs/battery-input.js';

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
