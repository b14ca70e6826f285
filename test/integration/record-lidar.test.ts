// `run --record` of an agent with a lidar (the simulated body's, a wall 1.2 m ahead) read back with @mcap/core: every revolution is on /lidar as Foxglove's foxglove.LaserScan (JSON), the wall where it is.
import t from 'tap';
import { existsSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { McapIndexedReader } from '@mcap/core';
import { FileHandleReadable } from '@mcap/nodejs';
import { decompressHandlers } from '../../src/record/compression.js';
import { startAgent, workDir } from '../helpers/agent-process.js';
import { requireBuild } from '../helpers/requires.js';

t.setTimeout(180_000);
requireBuild();

t.test('the lidar is recorded as foxglove.LaserScan', async (t) => {
  const w = workDir();
  const config = w.file('rover.json');
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'rover',
      default_mode: 'drive',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: '',
      system_governance: '',
      service: { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
      lidar: { source: 'sim', hz: 10, beams: 360, room: { x_min: -2, x_max: 1.2, y_min: -2, y_max: 2, obstacles: [] } },
      modes: {
        drive: {
          display_name: 'Drive',
          description: 'd',
          system_prompt_base: 'You are a rover.',
          hertz: 1,
          agent_inputs: [{ type: 'LidarInput', config: {} }],
          agent_actions: [{ name: 'move', llm_label: 'move', connector: 'body', config: {} }],
        },
      },
    }),
  );
  const file = w.file('run.mcap');
  const agent = startAgent(config, w.state, ['--record', file, '--for', '4s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const code = await agent.exited;
  t.equal(code, 0, `the run ended cleanly: ${agent.stderr().slice(-400)}`);
  t.ok(existsSync(file));

  const handle = await open(file, 'r');
  t.teardown(() => handle.close());
  const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(handle), decompressHandlers });
  const channel = [...reader.channelsById.values()].find((c) => c.topic === '/lidar');
  if (!channel) throw new Error(`no /lidar channel; topics: ${[...reader.channelsById.values()].map((c) => c.topic).join(', ')}`);
  const schema = reader.schemasById.get(channel.schemaId)!;
  t.equal(schema.name, 'foxglove.LaserScan', "Foxglove's schema name");
  t.equal(schema.encoding, 'jsonschema');
  t.equal(channel.messageEncoding, 'json');
  const fields = Object.keys((JSON.parse(new TextDecoder().decode(schema.data)) as { properties: object }).properties);
  t.same(fields.sort(), ['end_angle', 'frame_id', 'intensities', 'pose', 'ranges', 'start_angle', 'timestamp']);

  const scans: Array<{ ranges: number[]; start_angle: number; end_angle: number; frame_id: string; pose: { orientation: object } }> = [];
  for await (const m of reader.readMessages({ topics: ['/lidar'] })) scans.push(JSON.parse(new TextDecoder().decode(m.data)));
  t.ok(scans.length >= 10, `${scans.length} scans in about 4 s at 10 Hz`);
  const s = scans.at(-1)!;
  t.equal(s.ranges.length, 360);
  // The simulated sensor turns clockwise from forward: equal steps of -1°, beam 0 straight ahead.
  t.equal(s.start_angle, 0);
  t.ok(Math.abs(s.end_angle + (359 * Math.PI) / 180) < 1e-4, `end_angle ${s.end_angle}`);
  t.ok(Math.abs(s.ranges[0]! - 1.2) < 0.01, `the wall ahead at ${s.ranges[0]} m`);
  t.ok(Math.abs(s.ranges[180]! - 2) < 0.01, `the wall behind at ${s.ranges[180]} m`);
  t.same(s.pose.orientation, { x: 0, y: 0, z: 0, w: 1 });
  t.equal(s.frame_id, 'base_link');
});
