// Proves the translations of OM1's long-tail names: RTSP inputs, team models, Gazebo and Zenoh under --simulate (named missing otherwise), odometry, faces.
import t from 'tap';
import { convertOm1 } from '../../src/compat/om1/convert.js';

const file = (extra: Record<string, unknown>) => ({
  version: 'v1.1.0',
  name: 'bot',
  api_key: 'openmind_free',
  system_governance: '',
  agent_inputs: [],
  agent_actions: [],
  cortex_llm: { type: 'OpenAILLM', config: {} },
  ...extra,
});

t.test('RTSP audio becomes an ffmpeg microphone; RTSP video an OpenCV camera on the URL', async (t) => {
  const c = convertOm1(
    file({
      agent_inputs: [{ type: 'GoogleASRRTSPInput', config: { rtsp_url: 'rtsp://robot:8554/mic' } }, { type: 'GoogleASRRTSPInput' }, { type: 'VLMVilaRTSP' }],
    }),
  );
  t.same(c.missing, []);
  const inputs = c.config.agent_inputs as Array<{ type: string; config: Record<string, unknown> }>;
  t.same(inputs[0], {
    type: 'SpeechlabASRInput',
    config: { descriptor: 'Voice', language: 'en', microphone: { binding: 'rtsp', url: 'rtsp://robot:8554/mic' } },
  });
  t.same(inputs[1]!.config.microphone, { binding: 'rtsp', url: 'rtsp://localhost:8554/audio' });
  t.match(c.translations.join('\n'), /no rtsp_url: the robot's RTSP server assumed; set rtsp_url/);
  t.same(inputs[2], { type: 'VLMInput', config: { descriptor: 'Vision', camera: { binding: 'opencv', device: 'rtsp://localhost:8554/top_camera' } } });
});

t.test("OM1's hosted team models become MultiLLM over the hosted chat API; RAG on OpenMind's hosted knowledge base is named unsupported", async (t) => {
  const healthy = convertOm1(
    file({ cortex_llm: { type: 'MultiLLMHealthy', config: { agent_name: 'Doc', history_length: 4, question_states: { states: [] } } } }),
  );
  t.same(healthy.missing, []);
  t.same(healthy.config.cortex_llm, {
    type: 'MultiLLM',
    config: {
      strategy: 'fallback',
      models: [{ type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4.1-nano' } }],
      agent_name: 'Doc',
      history_length: 4,
    },
  });
  t.match(healthy.translations.join('\n'), /medical-intake agent.*question_states: OM1's server tracks which intake question comes next/s);
  const team = convertOm1(file({ cortex_llm: { type: 'MultiLLM', config: { agent_name: 'Bits' } } }));
  t.match(team.config.cortex_llm, { type: 'MultiLLM', config: { strategy: 'fallback' } }, "OM1's own MultiLLM (no models) is its hosted team");
  const native = convertOm1(file({ cortex_llm: { type: 'MultiLLM', config: { models: [{ type: 'CloudLLM' }] } } }));
  t.same(native.config.cortex_llm, { type: 'MultiLLM', config: { models: [{ type: 'CloudLLM' }] } }, 'a native MultiLLM is kept');
  t.match(
    convertOm1(file({ cortex_llm: { type: 'RagMultiLLM', config: { use_rag: true } } })).unsupported.join('\n'),
    /RagMultiLLM: talks only to OpenMind's hosted knowledge base for use_rag/,
  );
  t.same(convertOm1(file({ cortex_llm: { type: 'RagMultiLLM', config: {} } })).missing, []);
});

t.test('Gazebo and Zenoh names: the simulated body and face under --simulate, named missing for a real robot', async (t) => {
  const gazebo = file({
    agent_inputs: [{ type: 'VLMVilaGazebo', config: { topic: '/world/dog/camera' } }],
    agent_actions: [
      { name: 'move_sim', llm_label: 'move', connector: 'gazebo', config: { robot_name: 'go2' } },
      { name: 'emotion', llm_label: 'emotion', connector: 'zenoh' },
    ],
  });
  const sim = convertOm1(gazebo, { simulate: true });
  t.same(
    (sim.config.agent_inputs as Array<{ type: string }>).map((i) => i.type),
    ['VLMInput'],
  );
  const actions = sim.config.agent_actions as Array<Record<string, unknown>>;
  t.match(actions[0], { name: 'move', llm_label: 'move', connector: 'body', config: { robot: 'unitree_go2', binding: 'sim' } });
  t.match(actions[1], { name: 'face', llm_label: 'emotion', connector: 'websim' });
  t.same(sim.missing, []);
  const arm = convertOm1(file({ agent_actions: [{ name: 'arm_g1', llm_label: 'arm', connector: 'zenoh' }] }), { simulate: true });
  t.match(arm.missing.join('\n'), /arm_g1\/zenoh: OM1's arm_g1 topic over Zenoh: no Zenoh client/, 'no simulated arm: named missing');
  const real = convertOm1(gazebo);
  t.equal(real.missing.length, 3);
  t.match(real.missing.join('\n'), /VLMVilaGazebo.*no Gazebo bridge/);
  t.match(real.missing.join('\n'), /move_sim\/gazebo.*no Gazebo bridge/);
  t.match(real.missing.join('\n'), /emotion\/zenoh: OM1's avatar\/emotion topic over Zenoh/);
});

t.test('odometry, paths and faces', async (t) => {
  const c = convertOm1(
    file({
      unitree_ethernet: 'eth0',
      agent_inputs: [{ type: 'Odom', config: { use_zenoh: false } }, { type: 'Paths' }, { type: 'FacePresence', config: { camera_index: 1 } }],
      agent_actions: [{ name: 'move_go2_autonomy', llm_label: 'move', connector: 'move', config: { cmd_vel_topic: 'cmd_vel' } }],
    }),
  );
  t.same(c.missing, []);
  const inputs = c.config.agent_inputs as Array<{ type: string; config: Record<string, unknown> }>;
  t.match(inputs[0], { type: 'BodyInput', config: { robot: 'unitree_go2', binding: 'unitree_dds', facets: ['odometry'] } });
  t.match(inputs[1], { type: 'BodyInput', config: { facets: ['paths'] } });
  t.same(inputs[2], { type: 'PresenceInput', config: { descriptor: 'Faces', camera: { binding: 'opencv', device: 1 } } });
  t.match((c.config.agent_actions as unknown[])[0], { name: 'move', connector: 'body', config: { robot: 'unitree_go2', binding: 'unitree_dds' } });
  // A file that names no robot family: a simulated body under --simulate, missing otherwise.
  const bare = file({ agent_inputs: [{ type: 'Odom' }] });
  t.match(convertOm1(bare).missing.join('\n'), /the file names no robot family/);
  const sim = convertOm1(bare, { simulate: true });
  t.same(sim.missing, []);
  t.match((sim.config.agent_inputs as unknown[])[0], { type: 'BodyInput', config: { robot: 'unitree_go2', binding: 'sim' } });
});

t.test("OM1's lidars are the one lidar block: a serial RPLidar, a LaserScan over ROS 2 (use_zenoh, a TurtleBot 4's), options carried or named", async (t) => {
  const serial = convertOm1(
    file({
      agent_inputs: [{ type: 'RPLidar' }],
      agent_backgrounds: [
        {
          type: 'UnitreeGo2RPLidar',
          config: {
            serial_port: '/dev/ttyUSB1',
            half_width_robot: 0.21,
            relevant_distance_min: 0.2,
            sensor_mounting_angle: 172,
            angles_blanked: [[-180, -170]],
            log_file: true,
          },
        },
        { type: 'RFmapper' },
      ],
    }),
  );
  t.same(serial.missing, []);
  t.same(serial.config.lidar, {
    source: 'rplidar',
    port: '/dev/ttyUSB1',
    model: 'a1',
    half_width_robot: 0.21,
    relevant_distance_min: 0.2,
    sensor_mounting_angle: 172,
    angles_blanked: [[-180, -170]],
  });
  t.same(serial.config.agent_inputs, [{ type: 'LidarInput', config: {} }]);
  t.equal(serial.config.backgrounds, undefined, 'the background is carried by the lidar block');
  const said = serial.translations.join('\n');
  t.match(said, /log_file true: OM1 logs raw scans to a local file; here `--record` writes each scan/);
  t.match(said, /the obstacle guard is not turned on \(OM1 has none\)/);
  t.match(serial.unsupported.join('\n'), /RFmapper \(background\): talks only to OpenMind's Fabric map service/);

  const zenoh = convertOm1(
    file({ agent_inputs: [{ type: 'RPLidar', config: { use_zenoh: true, simple_paths: true, multicast_address: '224.0.0.224:7003' } }] }),
  );
  t.same(zenoh.config.lidar, { source: 'ros2', topic: '/scan', simple_paths: true });
  t.match(zenoh.translations.join('\n'), /use_zenoh: OM1 reads the robot's sensor_msgs\/LaserScan over a Zenoh bridge -> the ROS 2 topic \/scan over DDS/);
  t.match(zenoh.translations.join('\n'), /multicast_address "224\.0\.0\.224:7003": OM1's Zenoh discovery address/);

  const turtle = convertOm1(file({ agent_inputs: [{ type: 'TurtleBot4RPLidar', config: { sensor_mounting_angle: 270 } }] }));
  t.same(turtle.config.lidar, { source: 'ros2', topic: '/scan', sensor_mounting_angle: 270 });

  const conflicting = convertOm1(
    file({
      agent_inputs: [{ type: 'RPLidar', config: { serial_port: '/dev/ttyUSB0', half_width_robot: 0.2 } }],
      agent_backgrounds: [{ type: 'RPLidar', config: { half_width_robot: 0.3 } }],
    }),
  );
  t.equal((conflicting.config.lidar as Record<string, unknown>).half_width_robot, 0.2);
  t.match(conflicting.translations.join('\n'), /agent_backgrounds\[0\]: half_width_robot 0\.3 differs from 0\.2 of agent_inputs\[0\]/);
});
