// `--simulate`: rewrites a configuration (as parsed, before loading) onto simulated bindings for every device and the embedded service.
import { join } from 'node:path';
import { projectRoot } from '../paths.js';

export interface Simulation {
  config: Record<string, unknown>;
  /** One line per rewritten binding: `PATH: what -> simulated what`. */
  lines: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The simulated battery: a power_supply tree in sysfs's shape (BAT0, 87%, discharging, 12.3 V). */
export function simulatedPowerSupply(): string {
  return join(projectRoot(), 'config', 'media', 'power_supply');
}

/** The speech the simulated microphone replays (a person saying "turn left", looped). */
export function simulatedSpeechFile(): string {
  return join(projectRoot(), 'config', 'media', 'turn_left.wav');
}

const ASR_INPUTS = new Set(['SpeechlabASRInput', 'SpeechbASRInput']);
const CAMERA_INPUTS = new Set(['VLMInput', 'LocalVLMInput', 'PresenceInput']);
const SERIAL_INPUTS = new Set(['SerialReader', 'GpsInput']);
const SPEAKER_CONNECTORS = new Set(['speechlab_tts', 'speechb_tts', 'local_tts']);
/** The hosted model a simulated LocalLLM is answered by (the embedded service's rule-based model). */
const SIMULATED_MODEL = { provider: 'provider_a', model: 'gen-4o-mini' };

/** Says what was rewritten at a path of the configuration (one line of the simulation's report). */
type Note = (path: string, line: string) => void;

/** A model on another server (LocalLLM) answered by the embedded service instead; a MultiLLM's models each. */
function simulateModel(entry: unknown, path: string, at: Note): void {
  if (!isObject(entry)) return;
  if (entry.type === 'LocalLLM') {
    const c = isObject(entry.config) ? entry.config : {};
    at(path, `LocalLLM at ${String(c.base_url)} -> CloudLLM ${SIMULATED_MODEL.model} of the embedded service`);
    entry.type = 'CloudLLM';
    const keep = Object.fromEntries(
      Object.entries(c).filter(([k]) => ['agent_name', 'history_length', 'temperature', 'max_tokens', 'timeout_seconds', 'stream', 'skip_idle'].includes(k)),
    );
    entry.config = { ...keep, ...SIMULATED_MODEL };
  } else if (entry.type === 'MultiLLM' && isObject(entry.config) && Array.isArray(entry.config.models)) {
    entry.config.models.forEach((m, i) => simulateModel(m, `${path}.config.models[${i}]`, at));
  }
}

/** An input or background on its simulated device: replayed speech, synthetic frames, a mock port, a simulated battery or body. */
function simulateInput(e: unknown, path: string, at: Note): void {
  if (!isObject(e)) return;
  const c: Record<string, unknown> = isObject(e.config) ? e.config : (e.config = {});
  const type = String(e.type);
  if (ASR_INPUTS.has(type)) {
    c.microphone = { binding: 'replay', file: simulatedSpeechFile(), loop: true };
    at(path, `${type} microphone -> replay of config/media/turn_left.wav`);
  } else if (CAMERA_INPUTS.has(type)) {
    c.camera = { binding: 'synthetic', fps: 5 };
    at(path, `${type} camera -> synthetic frames`);
  } else if (type === 'GpsInput') {
    c.binding = 'mock';
    at(
      path,
      `GpsInput serial port ${String(c.serial_port ?? c.path ?? '/dev/ttyACM0')} -> a simulated receiver with a fix, standing still (NMEA every second)`,
    );
  } else if (SERIAL_INPUTS.has(type)) {
    c.binding = 'mock';
    at(path, `${type} serial port ${String(c.serial_port ?? c.path ?? '(default)')} -> a mock port`);
  } else if (type === 'BatteryInput' && c.binding === 'serial') {
    c.serial_binding = 'mock';
    at(path, `BatteryInput serial port ${String(c.serial_port)} -> a mock port`);
  } else if (type === 'BatteryInput') {
    at(path, `BatteryInput ${String(c.path ?? '/sys/class/power_supply')} -> a simulated battery (config/media/power_supply: 87%, discharging)`);
    c.path = simulatedPowerSupply();
    delete c.device;
  } else if (type === 'BodyInput') {
    at(path, `BodyInput binding ${String(c.binding ?? 'sim')} -> sim (a simulated body)`);
    c.binding = 'sim';
  } else if (type === 'MqttInput') {
    at(path, 'MqttInput: not simulated (its broker is used as configured)');
  }
}

/** An action on its simulated device (the null speaker, a mock port, the simulated body); returns the robot a body action moves. */
function simulateAction(e: unknown, path: string, at: Note): string | undefined {
  if (!isObject(e)) return undefined;
  const c: Record<string, unknown> = isObject(e.config) ? e.config : (e.config = {});
  const connector = String(e.connector);
  if (SPEAKER_CONNECTORS.has(connector)) {
    c.speaker = { binding: 'null' };
    at(path, `${connector} speaker -> the null sink (played in real time, not heard)`);
  } else if (connector === 'serial') {
    c.binding = 'mock';
    at(path, `serial ${String(c.path)} -> a mock port with a simulated controller (answers OK)`);
  } else if (connector === 'body') {
    at(path, `body binding ${String(c.binding ?? 'sim')} -> sim (a simulated body)`);
    c.binding = 'sim';
    if (typeof c.robot === 'string') return c.robot;
  } else if (connector === 'nav2' && c.binding !== undefined && c.binding !== 'sim') {
    at(path, `nav2 binding ${String(c.binding)} -> sim (the simulated body drives to the place)`);
    c.binding = 'sim';
    if (typeof c.robot === 'string') return c.robot;
  } else if (connector === 'unitree_arm') {
    at(path, 'unitree_arm -> console (each gesture is printed; the simulated body has no arms)');
    e.connector = 'console';
    e.config = {};
  } else if (connector === 'unitree_led') {
    at(path, "unitree_led -> websim (WebSim's face panel shows the expression)");
    e.connector = 'websim';
    e.config = {};
  } else if (connector === 'mqtt') {
    at(path, 'mqtt: not simulated (its broker is used as configured)');
  }
  return undefined;
}

/** A mode's inputs, backgrounds, actions and model simulated; returns the robot its first simulated move action walks. */
function simulateMode(m: Record<string, unknown>, prefix: string, at: Note): string | undefined {
  const inputs = [
    ...(Array.isArray(m.agent_inputs) ? m.agent_inputs.map((e, i) => [e, `${prefix}agent_inputs[${i}]`] as const) : []),
    ...(Array.isArray(m.backgrounds) ? m.backgrounds.map((e, i) => [e, `${prefix}backgrounds[${i}]`] as const) : []),
  ];
  inputs.forEach(([e, path]) => simulateInput(e, path, at));
  let moved: string | undefined;
  const actions = Array.isArray(m.agent_actions) ? m.agent_actions : [];
  actions.forEach((e, i) => {
    const robot = simulateAction(e, `${prefix}agent_actions[${i}]`, at);
    moved ??= robot;
  });
  if (m.cortex_llm !== undefined) simulateModel(m.cortex_llm, `${prefix}cortex_llm`, at);
  return moved;
}

/**
 * The simulated lidar in place of a real one (RPLidar, a ROS 2 LaserScan): it looks from the simulated
 * body the move action walks (its pose), when it is not told which. The sensor's geometry stays (the
 * same free paths and guard); the port, model, motor or topic go.
 */
function simulateLidar(config: Record<string, unknown>, movedRobot: string | undefined, at: Note): void {
  const lookFrom = movedRobot ? { robot: movedRobot } : {};
  if (isObject(config.lidar) && config.lidar.source === 'rplidar') {
    const { port, model, baud_rate, motor, motor_pwm, motor_rpm, answer_timeout_ms, spin_timeout_ms, reopen_initial_ms, reopen_max_ms, ...geometry } =
      config.lidar;
    at('lidar', `RPLidar on ${String(port ?? '/dev/ttyUSB0')} -> the simulated lidar of the simulated body, in a simulated room`);
    config.lidar = { ...lookFrom, ...geometry, source: 'sim' };
  } else if (isObject(config.lidar) && config.lidar.source === 'ros2') {
    const { topic, domain_id, network_interface, lost_after_ms, reopen_initial_ms, reopen_max_ms, ...geometry } = config.lidar;
    at('lidar', `LaserScan on ${String(topic ?? '/scan')} over ROS 2 -> the simulated lidar of the simulated body, in a simulated room`);
    config.lidar = { ...lookFrom, ...geometry, source: 'sim' };
  }
}

/**
 * Every device on its simulated binding: the microphone replays a recorded sentence, the camera is
 * synthetic frames, serial ports are serialport's mock ports, speakers are the null sink, robot
 * bodies are the simulated body; every service address is the embedded service, and a model on
 * another server (LocalLLM) is answered by the embedded service too. MQTT and MCP servers are left
 * as they are (their lines say so): there is no simulated broker or tool server.
 */
export function simulateConfig(raw: Record<string, unknown>): Simulation {
  const lines: string[] = [];
  const config: Record<string, unknown> = structuredClone(raw);
  const at: Note = (path, line) => lines.push(`${path}: ${line}`);
  // The robot the first simulated move action walks (the simulated lidar is mounted on it).
  let movedRobot: string | undefined;
  if (isObject(config.modes)) {
    for (const [name, m] of Object.entries(config.modes)) {
      if (!isObject(m)) continue;
      const moved = simulateMode(m, `modes.${name}.`, at);
      movedRobot ??= moved;
    }
    if (config.cortex_llm !== undefined) simulateModel(config.cortex_llm, 'cortex_llm', at);
  } else {
    movedRobot = simulateMode(config, '', at);
  }
  simulateLidar(config, movedRobot, at);
  if (isObject(config.safety) && isObject(config.safety.estop_serial) && config.safety.estop_serial.binding !== 'mock') {
    at('safety.estop_serial', `e-stop line on ${String(config.safety.estop_serial.path)} -> a mock port (no button: latch it with cortexd estop or WebSim)`);
    config.safety.estop_serial.binding = 'mock';
  }
  config.service = { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' };
  at('service', 'every address -> embedded (the local service in this process; CORTEX_* addresses are not read)');
  return { config, lines };
}

/** The parts of a loaded configuration that name serial ports. */
interface SerialUsers {
  safety?: { estop_serial?: { binding: string; path: string } | undefined } | undefined;
  modes: Record<
    string,
    {
      agent_inputs: Array<{ type: string; config: Record<string, unknown> }>;
      backgrounds?: Array<{ type: string; config: Record<string, unknown> }>;
      agent_actions: Array<{ connector: string; config: Record<string, unknown> }>;
    }
  >;
}

/** The serial paths a simulated configuration opens with the mock binding (each needs a mock port made before start). */
export function mockSerialPaths(config: SerialUsers): string[] {
  const paths = new Set<string>(simulatedControllerPaths(config));
  if (config.safety?.estop_serial?.binding === 'mock') paths.add(config.safety.estop_serial.path);
  for (const m of Object.values(config.modes)) {
    for (const i of [...m.agent_inputs, ...(m.backgrounds ?? [])])
      if (i.config.binding === 'mock' && (i.type === 'SerialReader' || i.type === 'GpsInput'))
        paths.add(String(i.config.serial_port ?? i.config.path ?? (i.type === 'GpsInput' ? '/dev/ttyACM0' : '/dev/ttyUSB0')));
      else if (i.type === 'BatteryInput' && i.config.serial_binding === 'mock' && typeof i.config.serial_port === 'string') paths.add(i.config.serial_port);
    for (const a of m.agent_actions) if (a.connector === 'serial' && a.config.binding === 'mock' && typeof a.config.path === 'string') paths.add(a.config.path);
  }
  return [...paths];
}

/** The mock ports of GpsInput: a simulated receiver sends NMEA on them. */
export function simulatedGpsPaths(config: SerialUsers): string[] {
  const paths = new Set<string>();
  for (const m of Object.values(config.modes))
    for (const i of [...m.agent_inputs, ...(m.backgrounds ?? [])])
      if (i.type === 'GpsInput' && i.config.binding === 'mock') paths.add(String(i.config.serial_port ?? i.config.path ?? '/dev/ttyACM0'));
  return [...paths];
}

/** The mock ports of `serial` connectors (`move`, `face`): a simulated controller answers their commands. */
export function simulatedControllerPaths(config: SerialUsers): string[] {
  const paths = new Set<string>();
  for (const m of Object.values(config.modes))
    for (const a of m.agent_actions) if (a.connector === 'serial' && a.config.binding === 'mock' && typeof a.config.path === 'string') paths.add(a.config.path);
  return [...paths];
}
