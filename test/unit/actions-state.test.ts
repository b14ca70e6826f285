// Proves what actions keep in the state directory: named places in locations.json and the rotated interaction log.
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { pino } from 'pino';
import { filter, firstValueFrom } from 'rxjs';
import { createInteractionLog } from '../../actors/actions/interactions.js';
import { implicitActions, LocationStore, PositionBoard } from '../../actors/actions/locations.js';
import { createActionHandle } from '../../actors/actions/action.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { toolsForMode } from '../../src/cortex/tools.js';
import { allActionPlugins } from '../helpers/plugins.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cortexd-actions-'));
type ActionEv = Extract<AgentEvent, { type: 'action' }>;

t.test('remember_location saves the latest GPS fix under a name, atomically, in locations.json', async (t) => {
  const stateDir = tmp();
  const [entry] = implicitActions({ remember_locations: true, agent_actions: [] });
  t.equal(entry!.llm_label, 'remember_location');
  t.same(implicitActions({ remember_locations: false, agent_actions: [] }), []);
  const tool = toolsForMode([entry!], [])[0]!;
  t.same((tool.function.parameters as { required: string[] }).required, ['name']);

  const bus = new AgentBus();
  const lines: string[] = [];
  const gpsPositions = new PositionBoard();
  const handle = createActionHandle(entry!, {
    logger: pino({ level: 'silent' }),
    bus,
    mode: 'explore',
    stateDir,
    positions: gpsPositions,
    write: (l) => lines.push(l),
    plugins: await allActionPlugins(),
  });
  const settled = () => firstValueFrom(bus.events$.pipe(filter((e): e is ActionEv => e.type === 'action' && (e.state === 'done' || e.state === 'failed'))));

  let result = settled();
  handle.dispatch({ name: 'kitchen' }, 'model');
  t.match((await result).error, /no GPS fix/, 'refused without a fix');

  gpsPositions.publish({ lat: 48.1173, lon: 11.516667, altitudeM: 545.4, at: Date.now() });
  result = settled();
  handle.dispatch({ name: 'kitchen' }, 'model');
  t.equal((await result).state, 'done');
  result = settled();
  handle.dispatch({ name: 'Front door', lat: 1.5, lon: 2.5 }, 'model');
  await result;
  result = settled();
  handle.dispatch({ name: 'KITCHEN' }, 'model'); // same place name, case-insensitive: replaced
  await result;

  const file = join(stateDir, 'locations.json');
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  t.same(Object.keys(saved.locations).sort(), ['Front door', 'KITCHEN']);
  t.equal(saved.locations.KITCHEN.lat, 48.1173);
  t.equal(saved.locations.KITCHEN.altitude_m, 545.4);
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.same(readdirSync(stateDir), ['locations.json'], 'no temporary files left');
  t.match(new LocationStore(stateDir).describe(), /^Known places: Front door \(1\.500000, 2\.500000\); KITCHEN/);
  t.match(lines.at(-1), /\[remember_location\] KITCHEN at 48\.117300/);

  writeFileSync(file, '{not json');
  result = settled();
  handle.dispatch({ name: 'x' }, 'model');
  t.match((await result).error, /locations\.json is not JSON/, 'a corrupt file is reported, not overwritten');
  t.equal(readFileSync(file, 'utf8'), '{not json');
  await handle.stop();
});

t.test('stale fixes do not count', async (t) => {
  const gpsPositions = new PositionBoard();
  gpsPositions.publish({ lat: 1, lon: 2, at: 1000 });
  t.equal(gpsPositions.latest(60_000, 1000 + 60_001), undefined);
  t.same(gpsPositions.latest(60_000, 2000), { lat: 1, lon: 2, at: 1000 });
});

const record = (tick: number, prompt = 'Voice: hello') => ({
  mode: 'chat',
  tick,
  prompt,
  answer: { model: 'gen-4o-mini', text: 'hi', tool_calls: [{ name: 'speak', arguments: { sentence: 'hi' } }] },
  actions: [{ label: 'speak', value: { sentence: 'hi' }, state: 'queued' }],
});

t.test('interactions: one JSON line per tick, in order, secrets redacted', async (t) => {
  const dir = tmp();
  const log = createInteractionLog(dir, 'companion');
  await Promise.all([log.append(record(1)), log.append(record(2, 'my key is key_live_abcdefghijklmnopqrstuvwx')), log.append(record(3))]);
  const lines = readFileSync(log.path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.equal(log.path, join(dir, 'interactions', 'companion.jsonl'));
  t.same(
    lines.map((l) => l.tick),
    [1, 2, 3],
  );
  t.same(lines[0].answer.tool_calls, [{ name: 'speak', arguments: { sentence: 'hi' } }]);
  t.match(lines[0].at, /^\d{4}-\d\d-\d\dT/);
  t.notMatch(lines[1].prompt, /abcdefghijklmnop/);
  t.equal(statSync(log.path).mode & 0o777, 0o600);
});

t.test('interactions: rotated by size, keeping N files, newest last line in the current file', async (t) => {
  const dir = tmp();
  const line = Buffer.byteLength(JSON.stringify({ at: new Date().toISOString(), ...record(10) })) + 1;
  const log = createInteractionLog(dir, 'companion', { maxBytes: line * 2 + 5, keep: 3 });
  for (let i = 10; i < 19; i++) await log.append(record(i));
  const files = readdirSync(join(dir, 'interactions')).sort();
  t.same(files, ['companion.1.jsonl', 'companion.2.jsonl', 'companion.jsonl']);
  const ticks = (f: string) =>
    readFileSync(join(dir, 'interactions', f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).tick);
  t.same(ticks('companion.2.jsonl'), [14, 15]);
  t.same(ticks('companion.1.jsonl'), [16, 17]);
  t.same(ticks('companion.jsonl'), [18]);
  for (const f of files) t.ok(statSync(join(dir, 'interactions', f)).size <= line * 2 + 5);
});

t.test('interactions: a write failure is logged, never thrown', async (t) => {
  const dir = tmp();
  writeFileSync(join(dir, 'interactions'), 'a file where the directory should be');
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (s: string) => void warnings.push(JSON.parse(s).msg) });
  const log = createInteractionLog(dir, 'c', { logger });
  await t.resolves(log.append(record(1)));
  t.match(warnings[0], /cannot save interaction/);
});
