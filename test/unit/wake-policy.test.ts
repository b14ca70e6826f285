// Only a meaningful change of an input calls the model: each input's measure (vision, battery, GPS, voice), the config's `wake`, and the tick that applies them.
import t from 'tap';
import { BehaviorSubject } from 'rxjs';
import { pino } from 'pino';
import { runTick, type TickDeps, type TickInput } from '../../actors/cortex/tick.js';
import { LocalVlmInput, LocalVLMInputSchema } from '../../actors/inputs/local-vlm-input.js';
import { BatteryInput, BatteryInputSchema } from '../../actors/inputs/battery-input.js';
import { TextInput } from '../../actors/inputs/text-input.js';
import { AgentBus } from '../../src/cortex/events.js';
import type { ActionHandle } from '../../src/cortex/contracts.js';
import type { LlmRequest } from '../../src/cortex/llm.js';
import type { ActionConfig, AgentConfig, ModeConfig } from '../../src/config/schema.js';
import { TextInputOptions } from '../../src/plugins/schemas/inputs.js';
import { toolsForMode } from '../../src/cortex/tools.js';
import { batteryChanged, gpsChanged, textShape, visionChanged, WakeGate } from '../../src/cortex/wake.js';
import { describe } from '../../src/vision/analyse.js';

const face = { x: 10, y: 10, width: 40, height: 40 };
/** The words `describe` gives a frame with `faces` faces and `motion` (fraction of the view changed). */
const seen = (faces: number, motion: number | undefined) => describe({ faces: Array.from({ length: faces }, () => face), motion, width: 640, height: 480 });

t.test('vision: a change of the faces count or the motion level is news; the percentage is not', async (t) => {
  const a = `Vision: ${seen(0, 0.02)}`;
  t.match(a, /Slight motion \(2% of the view\)/);
  t.notOk(visionChanged(a, `Vision: ${seen(0, 0.04)}`), '2% -> 4% slight motion: same news');
  t.ok(visionChanged(a, `Vision: ${seen(1, 0.04)}`), 'a face appeared');
  t.ok(visionChanged(a, `Vision: ${seen(0, 0.3)}`), 'slight -> strong motion');
  t.ok(visionChanged(a, `Vision: ${seen(0, 0)}`), 'slight -> no motion');
  t.notOk(visionChanged(a, `Vision: ${seen(0, 0.3)}`, ['faces']), 'wake_on [faces] ignores motion');
  t.ok(visionChanged('Vision: a red ball on a table', 'Vision: a blue cup'), 'free text: a description in other words is news');
  t.notOk(visionChanged('Vision: 3 people at 2 m', 'Vision: 3 people at 4 m'), 'free text: only numbers moved');
  t.equal(textShape('a 1.5 b  22'), 'a # b #');
});

t.test('battery: status, low flag, or another charge bucket', async (t) => {
  t.notOk(batteryChanged('Battery: 78% (Discharging, 11.9 V)', 'Battery: 71% (Discharging, 11.8 V)'), '78 -> 71 in buckets of 10');
  t.ok(batteryChanged('Battery: 71% (Discharging)', 'Battery: 69% (Discharging)'), '71 -> 69 crosses a bucket');
  t.ok(batteryChanged('Battery: 50% (Discharging)', 'Battery: 50% (Charging)'), 'status');
  t.ok(batteryChanged('Battery: 21% (Discharging)', 'Battery: 20% (Discharging, low)', 50), 'low flag even within a bucket');
  t.notOk(batteryChanged('Battery: 98% (Discharging)', 'Battery: 76% (Discharging)', 25), 'wake_percent_step 25: 98 and 76 share a bucket');
});

t.test('GPS: the fix or a move of at least wake_distance_m', async (t) => {
  const at = (lat: number, lon: number) => `GPS: fix (GPS, 8 satellites), position ${lat.toFixed(6)}, ${lon.toFixed(6)}, altitude 545.4 m`;
  t.notOk(gpsChanged(at(48.1173, 11.516667), at(48.11731, 11.516667)), 'about 1 m');
  t.ok(gpsChanged(at(48.1173, 11.516667), at(48.1176, 11.516667)), 'about 33 m');
  t.notOk(gpsChanged(at(48.1173, 11.516667), at(48.1176, 11.516667), 50), 'about 33 m with wake_distance_m 50');
  t.ok(gpsChanged(at(48.1173, 11.516667), 'GPS: no fix (3 satellites)'), 'fix lost');
});

// A tick with real input plugins fed through their RawToText, and a model that records its prompts.
const speak = {
  name: 'speak',
  llm_label: 'speak',
  connector: 'console',
  implementation: 'passthrough',
  config: {},
  exclude_from_prompt: false,
} as ActionConfig;
const mode = { system_prompt_base: 'explore', agent_actions: [speak] } as unknown as ModeConfig;
const config = { system_governance: '', system_prompt_examples: '', system_prompt_base: '' } as unknown as AgentConfig;
const handle: ActionHandle = {
  entry: speak,
  dispatch: () => {},
  run: async () => {},
  interrupt: () => {},
  queueLength: 0,
  busy$: new BehaviorSubject(false),
  stop: async () => {},
};

function ticker(inputs: TickInput[]) {
  const asked: LlmRequest[] = [];
  const deps: TickDeps = {
    config,
    modeName: 'explore',
    mode,
    inputs,
    handles: () => [handle],
    llm: { type: 'fake', ask: async (r) => (asked.push(r), { toolCalls: [], model: 'fake', latencyMs: 1 }) },
    toolsForMode,
    bus: new AgentBus(),
    logger: pino({ level: 'silent' }),
    keywords: () => false,
    skipIdle: true,
    maxToolRounds: 1,
    wake: new WakeGate(),
  };
  let seq = 0;
  const tick = async () =>
    (await runTick(deps, { seq: ++seq, slot: seq, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: false }, new AbortController().signal)).calledModel;
  return { tick, asked };
}

function vision(wake: Record<string, unknown> = {}) {
  const cfg = LocalVLMInputSchema.parse({ camera: { binding: 'synthetic' }, ...wake });
  const plugin = new LocalVlmInput(cfg);
  const show = (faces: number, motion: number | undefined) => {
    const analysis = { faces: Array.from({ length: faces }, () => face), motion, width: 640, height: 480 };
    plugin.rawToText({ text: describe(analysis), analysis, at: Date.now() });
  };
  return { slot: { plugin, finals: [] } as TickInput, show };
}

/** One frame per tick, as the default's explore mode sees them: mostly slight motion whose percentage wobbles. */
const FRAMES: Array<[number, number | undefined]> = [
  [0, undefined],
  [0, 0.02],
  [0, 0.04],
  [0, 0.02],
  [0, 0.04],
  [1, 0.03],
  [1, 0.04],
  [1, 0.2],
  [1, 0.25],
  [0, 0.02],
];

t.test('a tick calls the model when a vision input changed meaningfully, not on every new frame', async (t) => {
  const v = vision();
  const { tick, asked } = ticker([v.slot]);
  const called: boolean[] = [];
  for (const [faces, motion] of FRAMES) {
    v.show(faces, motion);
    called.push(await tick());
  }
  // unknown motion, slight, (same x3), a face, (same), strong, (same), no face and slight again.
  t.same(called, [true, true, false, false, false, true, false, true, false, true]);
  t.equal(asked.length, 5);
  t.match(JSON.stringify(asked[2]!.messages), /I see 1 face/);
});

t.test('wake: always calls on every new frame, never on none; wake_on narrows what counts', async (t) => {
  for (const [wake, expected] of [
    [{ wake: 'always' }, 10],
    [{ wake: 'never' }, 0],
    [{ wake_on: ['faces'] }, 3],
  ] as const) {
    const v = vision(wake);
    const { tick, asked } = ticker([v.slot]);
    for (const [faces, motion] of FRAMES) {
      v.show(faces, motion);
      await tick();
    }
    t.equal(asked.length, expected, JSON.stringify(wake));
  }
});

t.test('every final is news; the prompt then carries the unchanged vision text too', async (t) => {
  const v = vision();
  const text = new TextInput(TextInputOptions.parse({ descriptor: 'Voice' }));
  const typed = { plugin: text, finals: [] as string[] };
  const { tick, asked } = ticker([v.slot, typed]);
  v.show(0, 0.02);
  t.ok(await tick(), 'first look at the room');
  v.show(0, 0.03);
  t.notOk(await tick(), 'same room');
  for (const line of ['turn left', 'turn left']) {
    v.show(0, 0.04);
    text.rawToText(line);
    t.ok(await tick(), `"${line}" calls the model even when said twice`);
  }
  const last = JSON.stringify(asked.at(-1)!.messages);
  t.match(last, /turn left/);
  t.match(last, /Slight motion/, 'the vision line rides along');
});

t.test('battery readings call the model only across a bucket or on a status change', async (t) => {
  const battery = new BatteryInput(BatteryInputSchema.parse({ path: '/nonexistent' }));
  const { tick } = ticker([{ plugin: battery, finals: [] }]);
  const called: boolean[] = [];
  for (const [percent, status] of [
    [78, 'Discharging'],
    [74, 'Discharging'],
    [70, 'Discharging'],
    [69, 'Discharging'],
    [69, 'Charging'],
  ] as const) {
    battery.rawToText({ device: 'BAT0', percent, status, at: Date.now() });
    called.push(await tick());
  }
  t.same(called, [true, false, false, true, true]);
});
