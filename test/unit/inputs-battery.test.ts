// Proves BatteryInput on a fake sysfs tree: finds the battery, reports percent/status/voltage on change only, low battery wakes the loop.
import t from 'tap';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualTimeScheduler, firstValueFrom } from 'rxjs';
import { BatteryInput, BatteryInputSchema, readBattery, type BatteryReading } from '../../actors/inputs/battery-input.js';
import { waitFor } from '../helpers/wait.js';

function fakeSysfs(files: Record<string, Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'power-supply-'));
  for (const [dev, entries] of Object.entries(files)) {
    mkdirSync(join(root, dev));
    for (const [name, value] of Object.entries(entries)) writeFileSync(join(root, dev, name), `${value}\n`);
  }
  return root;
}

t.test('finds the battery among supplies; reports on change only; low battery is final', async (t) => {
  const root = fakeSysfs({
    AC: { type: 'Mains', online: '0' },
    BAT0: { type: 'Battery', capacity: '80', status: 'Discharging', voltage_now: '11900000' },
  });
  const scheduler = new VirtualTimeScheduler();
  const input = new BatteryInput(BatteryInputSchema.parse({ path: root, poll_seconds: 10 }), undefined, scheduler);
  const readings: BatteryReading[] = [];
  // As the input actor does: one rawToText per raw event, which buffers the message.
  const finals: boolean[] = [];
  const sub = input.listen().subscribe((r) => (readings.push(r), finals.push(Boolean(input.rawToText(r)?.final))));
  const step = async (reads: number) => {
    // Advance one poll period of virtual time, then wait for that read of the files to land.
    scheduler.maxFrames = scheduler.frame + 10_000;
    scheduler.flush();
    await waitFor(() => (input.reads >= reads ? true : undefined));
  };
  await step(1);
  t.match(readings[0], { device: 'BAT0', percent: 80, status: 'Discharging', volts: 11.9 });
  t.equal(input.formattedLatestBuffer(), 'Battery: 80% (Discharging, 11.9 V)');
  t.equal(finals[0], false);
  await step(2);
  t.equal(readings.length, 1, 'the same reading again is not repeated');
  writeFileSync(join(root, 'BAT0', 'capacity'), '15\n');
  await step(3);
  t.equal(readings.length, 2);
  t.equal(input.formattedLatestBuffer(), 'Battery: 15% (Discharging, 11.9 V, low)');
  t.equal(finals[1], true, 'a low battery wakes the loop');
  sub.unsubscribe();
  await input.stop();
});

t.test('energy files stand in for capacity; a tree without a battery is a typed error', async (t) => {
  const root = fakeSysfs({ BAT1: { type: 'Battery', energy_now: '30000000', energy_full: '40000000', status: 'Charging' } });
  t.match(await readBattery(root, 'BAT1'), { percent: 75, status: 'Charging' });
  const none = fakeSysfs({ AC: { type: 'Mains' } });
  const input = new BatteryInput(BatteryInputSchema.parse({ path: none }));
  await t.rejects(firstValueFrom(input.listen()), { name: 'BatteryError', message: /no supply of type Battery/ });
  await input.stop();
  t.equal(BatteryInputSchema.parse({}).path, '/sys/class/power_supply');
});
