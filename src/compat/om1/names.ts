// OM1's plugin names and options mapped to this runtime's: one translator per OM1 name, each saying what it changed or what is missing.
import type { Robot } from '../../plugins/schemas/body.js';
import { DEFAULT_LOCATIONS_URL } from '../../plugins/schemas/navigate.js';

/** An OM1 entry (`agent_inputs[]`, `agent_actions[]`, `cortex_llm`, `backgrounds[]`) as written. */
export type Entry = Record<string, unknown>;
/** Options of an entry (`config`). */
export type Options = Record<string, unknown>;

/** What the converter knows of the whole file while it translates one entry. */
export interface Scope {
  /** The robot family the file is written for (from its plugin names), if any. */
  robot: Robot | undefined;
  /** The robot bus the family uses (the body binding asked for; `cortexd run --simulate` makes it `sim`). */
  transport: 'unitree_dds' | 'ros2_zenoh' | 'limx_sdk' | 'ubtech_http' | undefined;
  /** `unitree_ethernet` of the file: the network interface of the robot's bus. */
  networkInterface: string | undefined;
  /** Options of the mode's (and global) backgrounds by OM1 type: the Gps input reads the Gps background's port. */
  backgrounds: Map<string, Options>;
  /** `--simulate`: a device this runtime cannot open (RTSP audio, a robot's own speaker) is simulated instead of missing. */
  simulate: boolean;
}

/** The result of translating one entry. */
export type Translation =
  | { kind: 'ok'; entry: Entry; notes: string[] }
  /** No entry: what OM1 did is carried by another entry or by the runtime itself. */
  | { kind: 'carried'; by: string }
  /** Not carried out by this runtime: why, and what would carry it out. */
  | { kind: 'missing'; reason: string }
  /** A plugin that only talks to a third-party web service: unsupported on purpose. */
  | { kind: 'unsupported'; service: string };

const ok = (entry: Entry, notes: string[] = []): Translation => ({ kind: 'ok', entry, notes });
const missing = (reason: string): Translation => ({ kind: 'missing', reason });
const unsupported = (service: string): Translation => ({ kind: 'unsupported', service });
const carried = (by: string): Translation => ({ kind: 'carried', by });

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Copies the options named in `keep` that are set; reports every other option as dropped with `why`. */
function pick(options: Options, keep: Record<string, string>, notes: string[], dropped: Record<string, string> = {}): Options {
  const out: Options = {};
  for (const [k, v] of Object.entries(options)) {
    if (k in keep) out[keep[k]!] = v;
    else if (k in dropped) notes.push(`${k} ${JSON.stringify(v)}: ${dropped[k]}`);
    else notes.push(`${k} ${JSON.stringify(v)}: an option this runtime does not know; left out`);
  }
  return out;
}

// ---- Models -----------------------------------------------------------------------------------

/** OM1's model names to the hosted API's brand-neutral ones, per provider (src/cloud/catalog.ts). */
const MODEL_RENAMES: Array<[RegExp, string]> = [
  [/^gpt-/, 'gen-'],
  [/^deepseek-chat$/, 'deep-chat'],
  [/^gemini-/, 'twin-'],
  [/^grok-/, 'gk-'],
  [/^qwen/, 'qw'],
  [/^meta-llama\/llama-/, 'orgm/ll-'],
  [/^anthropic\/claude-sonnet-/, 'orgc/sage-mid-'],
  [/^anthropic\/claude-opus-/, 'orgc/sage-top-'],
];
export function renameModel(model: string): string {
  for (const [re, to] of MODEL_RENAMES) if (re.test(model)) return model.replace(re, to);
  return model;
}

/** Hosted model plugins: provider, OM1's default model, a fallback when OM1's model is not offered. */
const HOSTED: Record<string, { provider: string; model: string; fallback?: string }> = {
  OpenAILLM: { provider: 'provider_a', model: 'gpt-4o-mini' },
  DeepSeekLLM: { provider: 'provider_b', model: 'deepseek-chat' },
  GeminiLLM: { provider: 'provider_c', model: 'gemini-2.0-flash-exp', fallback: 'twin-2.5-flash' },
  XAILLM: { provider: 'provider_d', model: 'grok-4-latest' },
  OpenRouter: { provider: 'provider_f', model: 'meta-llama/llama-3.3-70b-instruct' },
};

const LLM_KEEP = {
  agent_name: 'agent_name',
  history_length: 'history_length',
  temperature: 'temperature',
  max_tokens: 'max_tokens',
  timeout: 'timeout_seconds',
};
const LLM_DROPPED = {
  base_url: "the hosted service's address is the configuration's `service.base_url` (or CORTEX_BASE_URL), not the model's",
  api_key: "the key is the configuration's `api_key` (or OM_API_KEY)",
  num_ctx: "not sent: an OpenAI-compatible endpoint uses the server's own context size",
};

function hostedLlm(type: string, options: Options, prefixes: (provider: string) => readonly string[]): Translation {
  const h = HOSTED[type]!;
  const notes: string[] = [];
  const asked = str(options.model) ?? h.model;
  let model = renameModel(asked);
  const offered = prefixes(h.provider);
  if (!offered.some((p) => model.startsWith(p))) {
    if (!h.fallback) return missing(`model ${asked} (as ${model}) is not offered by ${h.provider}; offered: ${offered.join(', ')}`);
    notes.push(`model ${asked} is not offered; the nearest offered model ${h.fallback} is used`);
    model = h.fallback;
  }
  const { model: _asked, ...rest } = options;
  const config = { provider: h.provider, model, ...pick(rest, LLM_KEEP, notes, LLM_DROPPED) };
  return ok({ type: 'CloudLLM', config }, [`provider ${h.provider}`, `model ${asked} -> ${model}`, ...notes]);
}

/** A model on a server of the robot's (OM1's QwenLLM and OllamaLLM) becomes LocalLLM. */
function localLlm(options: Options, defaultUrl: string | undefined, defaultModel: string): Translation {
  const notes: string[] = [];
  let base = str(options.base_url);
  if (!base) {
    if (!defaultUrl) return missing('no base_url: LocalLLM needs the server address');
    notes.push(`no base_url: ${defaultUrl} assumed (the local model server's port in OM1's own files); set base_url to your server`);
    base = defaultUrl;
  }
  if (!/\/v1\/?$/.test(base)) {
    notes.push(`base_url ${base} -> ${base.replace(/\/$/, '')}/v1 (the OpenAI-compatible path)`);
    base = `${base.replace(/\/$/, '')}/v1`;
  }
  const model = str(options.model) ?? defaultModel;
  const { base_url: _b, model: _m, ...rest } = options;
  return ok({ type: 'LocalLLM', config: { base_url: base, model, ...pick(rest, LLM_KEEP, notes, LLM_DROPPED) } }, notes);
}

/**
 * OM1's MultiLLMHealthy and RagMultiLLM send the fused prompt to OpenMind's hosted agent team (the
 * medical-intake agent, or the robot team with an optional RAG query first) with a model name. Here
 * the same prompt goes to MultiLLM over the hosted chat API with that model, members tried in order;
 * a RAG query is the knowledge base, which this runtime does not carry out.
 */
function teamLlm(type: string, options: Options, prefixes: (provider: string) => readonly string[], localKnowledge: boolean): Translation {
  // OM1's RAG asks OpenMind's hosted knowledge base (api.openmind.org/api/core/rag/query), whose documents are OpenMind's.
  if (type === 'RagMultiLLM' && options.use_rag === true && !localKnowledge)
    return unsupported(
      "OpenMind's hosted knowledge base for use_rag (api.openmind.org/api/core/rag/query: the documents are OpenMind's, not the robot's); give the file a knowledge_base with knowledge_base_root to answer from local documents, or drop use_rag",
    );
  const { question_states, use_rag: _rag, ...rest } = options;
  const member = hostedLlm('OpenAILLM', { model: str(options.model) ?? 'gpt-4.1-nano' }, prefixes);
  if (member.kind !== 'ok') return member;
  const notes: string[] = [
    ...(options.use_rag === true
      ? ["use_rag -> the file's knowledge_base: its passages for what was heard are in each turn's prompt (OM1 asks OpenMind's hosted one)"]
      : []),
    `OM1 sends the prompt to OpenMind's ${type === 'MultiLLMHealthy' ? 'medical-intake agent' : 'robot agent team'}; here to MultiLLM (fallback) over the hosted chat API: ${member.notes.join(', ')}`,
  ];
  if (question_states !== undefined)
    notes.push("question_states: OM1's server tracks which intake question comes next; here the system prompt's instructions and the model's history do");
  const { model: _m, ...kept } = rest;
  const config = {
    strategy: 'fallback',
    models: [{ type: 'CloudLLM', config: (member.entry.config as Options) ?? {} }],
    ...pick(kept, LLM_KEEP, notes, LLM_DROPPED),
  };
  return ok({ type: 'MultiLLM', config }, notes);
}

export function translateLlm(type: string, options: Options, prefixes: (provider: string) => readonly string[], localKnowledge = false): Translation {
  if (type in HOSTED) return hostedLlm(type, options, prefixes);
  if (type === 'QwenLLM') return localLlm(options, 'http://127.0.0.1:8860/v1', 'qwen');
  if (type === 'OllamaLLM') return localLlm(options, 'http://localhost:11434', 'llama3.2');
  // OM1's own MultiLLM (no `models`) is its hosted robot team, as RagMultiLLM without RAG.
  if (type === 'MultiLLMHealthy' || type === 'RagMultiLLM' || (type === 'MultiLLM' && !Array.isArray(options.models)))
    return teamLlm(type, options, prefixes, localKnowledge);
  if (['CloudLLM', 'LocalLLM', 'MultiLLM'].includes(type)) return ok({ type, config: options });
  return missing(`model plugin ${type} has no counterpart (CloudLLM, LocalLLM, MultiLLM)`);
}

// ---- Inputs -------------------------------------------------------------------------------------

/** OM1's language names (GoogleASRInput) to BCP-47 base codes. */
const LANGUAGES: Record<string, string> = {
  english: 'en',
  chinese: 'zh',
  german: 'de',
  french: 'fr',
  japanese: 'ja',
  korean: 'ko',
  spanish: 'es',
  italian: 'it',
  portuguese: 'pt',
  russian: 'ru',
  arabic: 'ar',
};

/** Where OM1's RTSP inputs read when a file gives no rtsp_url: the robot's own RTSP server. */
const RTSP_AUDIO = 'rtsp://localhost:8554/audio';
const RTSP_VIDEO = 'rtsp://localhost:8554/top_camera';

const ASR_DROPPED = { base_url: "the recognition socket is the service's (`service.ws_base_url`)", stream_base_url: "the service's address is used" };

function asr(options: Options, notes: string[], defaultLanguage = 'english'): Options {
  const raw = str(options.language) ?? defaultLanguage;
  const lower = raw.toLowerCase();
  const language = LANGUAGES[lower] ?? (/^[a-z]{2,3}(-[A-Za-z]{2,4})?$/.test(raw) ? raw.split('-')[0]!.toLowerCase() : 'en');
  notes.push(`language ${raw} -> ${language}`);
  const { language: _l, ...rest } = options;
  return {
    descriptor: 'Voice',
    language,
    ...pick(rest, { enable_tts_interrupt: 'allow_interruption', allow_interruption: 'allow_interruption' }, notes, ASR_DROPPED),
  };
}

const cameraOf = (options: Options, notes: string[]): Options => {
  const rtsp = str(options.rtsp_url);
  if (rtsp) {
    notes.push(`rtsp_url -> camera { binding: opencv, device: ${rtsp} } (OpenCV reads the RTSP stream)`);
    return { binding: 'opencv', device: rtsp };
  }
  const index = num(options.camera_index) ?? 0;
  notes.push(`camera_index ${index} -> camera { binding: opencv, device: ${index} }`);
  return { binding: 'opencv', device: index };
};

const VLM_DROPPED = {
  base_url: "the vision socket is the service's (`service.vlm_ws_url`)",
  stream_base_url: "the service's address is used",
  log_file: 'no detection log file: `cortexd run --events` records what the input saw',
  camera_index: 'see camera',
  rtsp_url: 'see camera',
};

function vlm(type: 'VLMInput' | 'LocalVLMInput', options: Options, descriptor: string): Translation {
  const notes: string[] = [];
  const camera = cameraOf(options, notes);
  const { prompt, descriptor_for_LLM, ...rest } = options;
  if (prompt !== undefined)
    return missing(`prompt ${JSON.stringify(prompt)}: the vision socket describes frames with its own prompt; a per-input prompt is not carried out`);
  const label = str(descriptor_for_LLM) ?? descriptor;
  if (descriptor_for_LLM !== undefined) notes.push(`descriptor_for_LLM -> descriptor ${label}`);
  return ok({ type, config: { descriptor: label, camera, ...pick(rest, {}, notes, VLM_DROPPED) } }, notes);
}

/** OM1's `ros2_zenoh` is the `ros2` binding here: DDS carries the same ROS 2 topics, no Zenoh bridge needed. */
function bindingOf(transport: NonNullable<Scope['transport']>): string {
  return transport === 'ros2_zenoh' ? 'ros2' : transport;
}

function transportNote(transport: NonNullable<Scope['transport']>): string {
  return transport === 'ros2_zenoh' ? 'ros2_zenoh -> ros2 (DDS carries the same ROS 2 topics; no Zenoh bridge is needed)' : transport;
}

/** The robot's body: battery, odometry or paths of the family's bus. */
function body(scope: Scope, facets: string[], notes: string[] = [], options: Options = {}): Translation {
  if ((!scope.robot || !scope.transport) && !scope.simulate) return missing('a robot body input, but the file names no robot family this runtime knows');
  if (!scope.robot || !scope.transport) notes.push('the file names no robot family: the simulated Go2 body (--simulate)');
  const config: Options = { robot: scope.robot ?? 'unitree_go2', binding: scope.transport ? bindingOf(scope.transport) : 'sim', facets };
  if (scope.networkInterface) config.network_interface = scope.networkInterface;
  notes.push(`${String(config.robot)} over ${scope.transport ? transportNote(scope.transport) : 'sim'}: ${facets.join(', ')}`);
  for (const [k, v] of Object.entries(options)) {
    if (k === 'URID' || k === 'use_zenoh') notes.push(`${k} ${JSON.stringify(v)}: chosen by the binding, not per input`);
    else notes.push(`${k} ${JSON.stringify(v)}: a lidar or odometry tuning option of OM1's driver; the simulated body has no sensor to tune`);
  }
  return ok({ type: 'BodyInput', config }, notes);
}

function gps(scope: Scope, background: string, options: Options): Translation {
  const notes: string[] = [];
  const port = str(options.serial_port) ?? str(scope.backgrounds.get(background)?.serial_port);
  if (!port) return missing(`${background}: no serial_port (OM1 reads it from the ${background} background)`);
  notes.push(`serial_port ${port}${options.serial_port ? '' : ` (from the ${background} background)`}`);
  if (background === 'Rtk') notes.push("RTK corrections are the receiver's: its NMEA fix quality 4/5 is read as any fix");
  return ok(
    { type: 'GpsInput', config: { descriptor: background === 'Rtk' ? 'RTK GPS' : 'GPS', serial_port: port, baud_rate: background === 'Rtk' ? 115200 : 9600 } },
    notes,
  );
}

const WEB_INPUTS: Record<string, string> = {
  GovernanceEthereum: 'governance rules read from the Ethereum blockchain',
  WalletCoinbase: 'a Coinbase wallet balance',
  WalletEthereum: 'an Ethereum wallet balance',
  TwitterInput: "X/Twitter's search API",
  DIMOTesla: "DIMO's Tesla vehicle API",
  FabricClosestPeer: "OpenMind's Fabric peer network",
};

// long: one case per OM1 input plugin name, a table of a few lines each, read top to bottom against OM1's plugin list.
export function translateInput(type: string, options: Options, scope: Scope): Translation {
  const notes: string[] = [];
  if (type in WEB_INPUTS) return unsupported(WEB_INPUTS[type]!);
  switch (type) {
    case 'GoogleASRInput':
      return ok({ type: 'SpeechlabASRInput', config: asr(options, notes) }, notes);
    case 'RivaASRInput':
      notes.push("OM1's Riva server protocol is not spoken: the service's recognition socket is used");
      return ok({ type: 'SpeechlabASRInput', config: asr(options, notes) }, notes);
    case 'GoogleASRRTSPInput':
    case 'RivaASRRTSPInput': {
      // The stream's audio decoded by ffmpeg (devices/microphone-rtsp.ts); --simulate replays a file instead.
      const url = str(options.rtsp_url) ?? RTSP_AUDIO;
      notes.push(
        `audio from the RTSP stream ${url}${options.rtsp_url ? '' : " (no rtsp_url: the robot's RTSP server assumed; set rtsp_url)"} -> microphone { binding: rtsp } (ffmpeg decodes it)`,
      );
      if (type === 'RivaASRRTSPInput') notes.push("OM1's Riva server protocol is not spoken: the service's recognition socket is used");
      const { rtsp_url: _r, ...rest } = options;
      return ok({ type: 'SpeechlabASRInput', config: { ...asr(rest, notes), microphone: { binding: 'rtsp', url } } }, notes);
    }
    case 'UbtechASRInput': {
      const what = "the Yanshee robot's microphone (its YanAPI)";
      if (!scope.simulate) return missing(`${what}: this runtime's microphone reads ALSA devices only (arecord/sox) or a replayed file`);
      notes.push(`${what} -> a replayed file (--simulate)`);
      const { rtsp_url: _r, ...rest } = options;
      return ok({ type: 'SpeechlabASRInput', config: asr(rest, notes) }, notes);
    }
    case 'VLMVila':
    case 'VLMOpenAI':
    case 'VLMGemini':
    case 'UnitreeGo2CameraVLMCloud':
      return vlm('VLMInput', options, 'Vision');
    case 'VLMVilaRTSP':
    case 'VLMOpenAIRTSP':
    case 'VLMGeminiRTSP':
      return vlm('VLMInput', { rtsp_url: RTSP_VIDEO, ...options }, 'Vision');
    case 'VLMVilaGazebo': {
      if (!scope.simulate)
        return missing("the Gazebo simulator's camera topic: no Gazebo bridge is built into this runtime (run with --simulate for the simulated camera)");
      const { topic, ...rest } = options;
      const t = vlm('VLMInput', rest, 'Vision');
      return t.kind === 'ok' ? { ...t, notes: [`Gazebo's camera${topic ? ` (${String(topic)})` : ''} -> the simulated camera (--simulate)`, ...t.notes] } : t;
    }
    case 'VLM_COCO_Local':
    case 'VLM_Local_YOLO':
    case 'DummyVLMLocal':
    case 'FaceEmotionCapture':
      return vlm('LocalVLMInput', options, type === 'FaceEmotionCapture' ? 'Faces' : 'Vision');
    case 'SerialReader':
      return ok({ type: 'SerialReader', config: pick(options, { serial_port: 'serial_port', port: 'serial_port', baud_rate: 'baud_rate' }, notes) }, notes);
    case 'Gps':
    case 'Rtk':
      return gps(scope, type, options);
    case 'UnitreeGo2Battery':
    case 'TurtleBot4Battery':
    case 'ChargingStatusUnitreeGo2':
      return body(scope, ['battery'], notes, options);
    case 'UnitreeGo2Odom':
    case 'Turtlebot4Odom':
    case 'TronOdom':
    case 'UnitreeG1Odom':
    case 'UnitreeG1Basic':
    case 'UnitreeGo2GPSOdomReader':
    case 'GPSOdomReader':
    case 'Odom':
      return body(scope, type === 'UnitreeG1Basic' ? ['battery', 'odometry'] : ['odometry'], notes, options);
    case 'RPLidar':
    case 'UnitreeGo2RPLidar':
    case 'TurtleBot4RPLidar':
      // The sensor itself is the file's one `lidar` block (lidarBlock below, said at `lidar`); the input says its free paths.
      return ok({ type: 'LidarInput', config: {} }, [
        `the free paths of the robot's lidar (the top-level lidar block${Object.keys(options).length ? ', which carries these options' : ''})`,
      ]);
    case 'SimplePaths':
    case 'Paths':
      return body(scope, ['paths'], notes, options);
    case 'FacePresence': {
      // OM1 reads who is in view from its face service; here OpenCV counts the faces on the robot's camera.
      notes.push(
        'faces in view of the robot\'s camera (OpenCV on the robot) as a "Faces:" line and person_present/person_approaching context values; OM1 also names known people (a gallery is not carried out)',
      );
      const camera = cameraOf(options, notes);
      const { camera_index: _c, rtsp_url: _r, ...rest } = options;
      return ok({ type: 'PresenceInput', config: { descriptor: 'Faces', camera, ...pick(rest, { fps: 'fps' }, notes) } }, notes);
    }
    case 'ConversationHistoryInput': {
      const rounds = num(options.max_rounds) ?? 3;
      return carried(
        `the model's own history: the mode's cortex_llm keeps at least the last ${rounds} round${rounds === 1 ? '' : 's'} (history_length), which holds what was heard and said`,
      );
    }
    case 'LocationsInput':
    case 'UnitreeGo2LocationsInput':
    case 'UnitreeG1LocationsInput':
      return carried("the mode's remember_locations: true (saved places are in every prompt)");
    default:
      if (
        ['TextInput', 'SpeechlabASRInput', 'SpeechbASRInput', 'VLMInput', 'LocalVLMInput', 'GpsInput', 'BatteryInput', 'MqttInput', 'BodyInput'].includes(type)
      )
        return ok({ type, config: options });
      return missing(`input ${type} has no counterpart in this runtime`);
  }
}

// ---- Lidar ---------------------------------------------------------------------------------------

/** OM1's lidar plugins (inputs and backgrounds; one RPLidarProvider behind them all, a singleton). */
export const LIDAR_TYPES: ReadonlySet<string> = new Set(['RPLidar', 'UnitreeGo2RPLidar', 'TurtleBot4RPLidar']);

/** OM1's RPLidarProvider default port (a macOS name). */
const OM1_LIDAR_PORT = '/dev/cu.usbserial-0001';
const LIDAR_GEOMETRY = ['half_width_robot', 'relevant_distance_max', 'relevant_distance_min', 'sensor_mounting_angle', 'angles_blanked', 'simple_paths'];
const LIDAR_DROPPED: Record<string, string> = {
  URID: "the robot's id in OM1's Zenoh key; DDS needs none",
  multicast_address: "OM1's Zenoh discovery address; DDS discovery is CycloneDDS's (CYCLONEDDS_URI)",
  machine_type: "picks OM1's Zenoh key (go2: scan, tb4: URID/pi/scan); here the ROS 2 topic is lidar.topic",
  log_file: 'OM1 logs raw scans to a local file; here `--record` writes each scan to the MCAP recording as foxglove.LaserScan',
  use_zenoh: 'see source',
  serial_port: 'see port',
};

/**
 * The file's one `lidar` block from OM1's lidar entries (inputs and backgrounds of every mode: OM1
 * runs one provider for all of them). An option given by several entries takes its first value (a
 * different later one is said). The source is OM1's: `use_zenoh` (OM1 reads the robot's
 * sensor_msgs/LaserScan over Zenoh) is the ROS 2 topic /scan over DDS; `serial_port` is an RPLidar on
 * that port (OM1's driver talks at 115200 baud: an A1/A2M8); a TurtleBot4RPLidar without a port is
 * the TurtleBot 4's own lidar on /scan; otherwise OM1's default port.
 */
export function lidarBlock(entries: ReadonlyArray<{ type: string; options: Options; path: string }>): { block: Options; notes: string[] } {
  const notes: string[] = [];
  const merged: Options = {};
  const from: Record<string, string> = {};
  for (const e of entries) {
    for (const [k, v] of Object.entries(e.options)) {
      if (!(k in merged)) {
        merged[k] = v;
        from[k] = e.path;
      } else if (JSON.stringify(merged[k]) !== JSON.stringify(v))
        notes.push(
          `${e.path}: ${k} ${JSON.stringify(v)} differs from ${JSON.stringify(merged[k])} of ${from[k]}; OM1's one lidar provider takes one value: the first`,
        );
    }
  }
  const port = str(merged.serial_port);
  const turtle = entries.some((e) => e.type === 'TurtleBot4RPLidar');
  const block: Options = {};
  if (merged.use_zenoh === true || (turtle && !port)) {
    block.source = 'ros2';
    block.topic = '/scan';
    notes.unshift(
      merged.use_zenoh === true
        ? "use_zenoh: OM1 reads the robot's sensor_msgs/LaserScan over a Zenoh bridge -> the ROS 2 topic /scan over DDS (set lidar.topic if the robot names it otherwise)"
        : "the TurtleBot 4's own lidar -> its ROS 2 topic /scan over DDS (set lidar.topic if the robot is namespaced)",
    );
  } else {
    block.source = 'rplidar';
    block.port = port ?? OM1_LIDAR_PORT;
    block.model = 'a1';
    notes.unshift(
      port
        ? `serial_port ${port} -> an RPLidar on that port (OM1's driver runs it at 115200 baud: model a1; set lidar.model for an A2M12, A3, C1 or S1)`
        : `no serial_port: OM1's default ${OM1_LIDAR_PORT} (a macOS name: on Linux set serial_port, e.g. /dev/ttyUSB0)`,
    );
  }
  for (const [k, v] of Object.entries(merged)) {
    if (LIDAR_GEOMETRY.includes(k)) {
      block[k] = v;
      notes.push(`${k} ${JSON.stringify(v)}: the same option, carried out (free paths and the obstacle guard)`);
    } else if (k in LIDAR_DROPPED) {
      if (k !== 'use_zenoh' && k !== 'serial_port') notes.push(`${k} ${JSON.stringify(v)}: ${LIDAR_DROPPED[k]}`);
    } else notes.push(`${k} ${JSON.stringify(v)}: an option this runtime does not know; left out`);
  }
  notes.push('the obstacle guard is not turned on (OM1 has none): add safety.obstacle to stop motion toward what the lidar sees');
  return { block, notes };
}

// ---- Actions -------------------------------------------------------------------------------------

const TTS_DROPPED = {
  silence_rate:
    'not carried out as a counter: OM1 speaks every (N+1)th tick unless someone spoke; this runtime calls the model only when an input has news (the wake policy), which keeps an idle robot quiet',
  enable_tts_interrupt: "barge-in is the voice input's allow_interruption",
};

const WEB_ACTIONS: Record<string, string> = {
  twitterAPI: "X/Twitter's posting API",
  tesla: "DIMO's Tesla vehicle API",
  fabric: "OpenMind's Fabric peer network",
};

const BODY_MOVES = new Set(['move', 'unitree_sdk', 'unitree_om_path_sdk', 'unitree_rplidar_sdk', 'go2_game_controller', 'zenoh', 'limx_sdk', 'yanshee_motion']);

// long: one branch per OM1 action connector, a table of a few lines each, read top to bottom against OM1's plugin list.
/** Translates an action entry (`name` + `connector` + `config`); `llm_label` and `exclude_from_prompt` are kept. */
export function translateAction(name: string, connectorName: string, options: Options, scope: Scope): Translation {
  const notes: string[] = [];
  if (connectorName in WEB_ACTIONS) return unsupported(WEB_ACTIONS[connectorName]!);
  const speechOf = (connector: string, keep: Record<string, string>) =>
    ok({ name: 'speak', connector, config: pick(options, keep, notes, TTS_DROPPED) }, notes);
  if (connectorName === 'elevenlabs_tts') {
    if (name !== 'speak') notes.push(`action ${name} -> speak (the model's tool keeps its label)`);
    return speechOf('speechlab_tts', { voice_id: 'voice', model_id: 'model' });
  }
  if (connectorName === 'kokoro_tts' || connectorName === 'riva_tts') {
    notes.push(`speech by espeak-ng on this machine: ${connectorName === 'kokoro_tts' ? "a Kokoro server's" : "a Riva server's"} protocol is not spoken`);
    const { voice_id: _v, model_id: _m, base_url: _b, ...rest } = options;
    return ok({ name: 'speak', connector: 'local_tts', config: pick(rest, {}, notes, TTS_DROPPED) }, notes);
  }
  if (connectorName === 'ub_tts') {
    if (!scope.simulate) return missing("speech through the Yanshee robot's speaker (its YanAPI): no UBTech binding is built into this runtime");
    notes.push("the Yanshee robot's speaker -> espeak-ng (--simulate)");
    return ok({ name: 'speak', connector: 'local_tts', config: {} }, notes);
  }
  if (connectorName === 'ros2' && ['speak', 'face', 'move'].includes(name)) {
    notes.push('OM1\'s ros2 connector only logs the command ("SendThisToROS2"); console prints it the same way');
    return ok({ name, connector: 'console', config: {} }, notes);
  }
  if (connectorName === 'zenoh' && ['emotion', 'face', 'avatar'].includes(name)) {
    if (!scope.simulate)
      return missing(
        "OM1's avatar/emotion topic over Zenoh: no Zenoh client is built into this runtime (no Zenoh router here to prove one against); run with --simulate for WebSim's face panel",
      );
    notes.push("OM1's emotion topic over Zenoh -> WebSim's face panel (--simulate)");
    return ok({ name: 'face', connector: 'websim', config: {} }, notes);
  }
  if (name === 'arm_g1' && connectorName === 'unitree_sdk') {
    // OM1 calls unitree_sdk2's G1ArmActionClient.ExecuteAction with the firmware's gesture ids.
    const notes = [
      "OM1's arm_g1 -> the arm action (the G1 firmware's gestures: left/right kiss, clap, high five, shake hand, heart, high wave, ...; OM1's idle is no command)",
    ];
    if (scope.simulate)
      return ok({ name: 'arm', connector: 'console', config: {} }, [...notes, 'each gesture is printed (--simulate: the simulated body has no arms)']);
    if (scope.robot !== 'unitree_g1' || scope.transport !== 'unitree_dds')
      return missing("arm_g1/unitree_sdk moves a Unitree G1's arms; the file names no G1 on its DDS bus");
    const config: Options = {};
    if (scope.networkInterface) config.network_interface = scope.networkInterface;
    return ok({ name: 'arm', connector: 'unitree_arm', config }, [
      ...notes,
      'ExecuteAction on rt/api/arm/request over DDS (api 7106); the safety governor gates it, a halt sends release arm',
    ]);
  }
  if (name === 'emotion' && connectorName === 'unitree_sdk') {
    // OM1 lights the G1's head LED through unitree_sdk2's AudioClient (LedControl): green, yellow, red, blue.
    const notes = [
      "OM1's emotion (happy, sad, mad, curious) -> the face action's expressions; the G1's head LED shows each as a colour (joy/smile green, sad yellow, confused red, think/curious blue, surprised magenta, neutral white)",
    ];
    if (scope.simulate) return ok({ name: 'face', connector: 'websim', config: {} }, [...notes, "the head LED -> WebSim's face panel (--simulate)"]);
    if (scope.robot !== 'unitree_g1' || scope.transport !== 'unitree_dds')
      return missing("emotion/unitree_sdk lights a Unitree G1's head LED; the file names no G1 on its DDS bus");
    const config: Options = {};
    if (scope.networkInterface) config.network_interface = scope.networkInterface;
    for (const [k, v] of Object.entries(options)) notes.push(`${k} ${JSON.stringify(v)}: an option of OM1's connector; left out`);
    return ok({ name: 'face', connector: 'unitree_led', config }, [...notes, 'LedControl on rt/api/voice/request over DDS (api 1010)']);
  }
  if (connectorName === 'zenoh' && !/^move/.test(name))
    return missing(
      `OM1's ${name} topic over Zenoh: no Zenoh client is built into this runtime (no Zenoh router here to prove one against), and the simulated body has no ${name}`,
    );
  if (connectorName === 'gazebo' || connectorName === 'sim_zenoh') {
    const what = connectorName === 'gazebo' ? "the Gazebo simulator's robot" : "OM1-sim's robot (Gazebo over Zenoh)";
    if (!scope.simulate) return missing(`${what}: no Gazebo bridge is built into this runtime (run with --simulate for the simulated body)`);
    const robot = scope.robot ?? 'unitree_go2';
    for (const [k, v] of Object.entries(options)) notes.push(`${k} ${JSON.stringify(v)}: an option of OM1's Gazebo driver; left out`);
    if (name !== 'move') notes.push(`action ${name} -> move (the model's tool keeps its label)`);
    return ok({ name: 'move', connector: 'body', config: { robot, binding: 'sim' } }, [`${what} -> the simulated ${robot} body (--simulate)`, ...notes]);
  }
  if (connectorName === 'avatar' && name === 'face') {
    notes.push("OM1's avatar page -> WebSim's face panel");
    return ok({ name: 'face', connector: 'websim', config: {} }, notes);
  }
  if (connectorName === 'serial_arduino') {
    notes.push('OM1\'s serial_arduino has no port configured (it logs "Simulating transmit"); console prints the command the same way');
    return ok({ name: 'move', connector: 'console', config: {} }, notes);
  }
  if (name === 'remember_location')
    return ok({ name: 'remember_location', connector: 'state_dir', config: {} }, ['the place is stored in the state directory at the latest GPS fix']);
  if (BODY_MOVES.has(connectorName) && /^move/.test(name)) {
    if ((!scope.robot || !scope.transport) && !scope.simulate) return missing(`${connectorName} moves a robot this file names no family of`);
    if (!scope.robot || !scope.transport) notes.push('the file names no robot family: the simulated Go2 body (--simulate)');
    const config: Options = { robot: scope.robot ?? 'unitree_go2', binding: scope.transport ? bindingOf(scope.transport) : 'sim' };
    if (scope.networkInterface) config.network_interface = scope.networkInterface;
    const dropped: Record<string, string> = {
      speed_x: "the game controller's speed; the body moves step_m per command",
      speed_yaw: "the game controller's turn rate; the body turns turn_deg per command",
      lateral_correction: 'a drift correction of the real Go2',
      yaw_correction: 'a drift correction of the real Go2',
    };
    for (const [k, v] of Object.entries(options)) notes.push(`${k} ${JSON.stringify(v)}: ${dropped[k] ?? "an option of OM1's driver; left out"}`);
    if (name !== 'move') notes.push(`action ${name} -> move (the model's tool keeps its label)`);
    if (connectorName === 'go2_game_controller') notes.push("OM1 also reads a physical game controller; this runtime's body takes the model's moves only");
    return ok({ name: 'move', connector: 'body', config }, [
      `${String(config.robot)} over ${scope.transport ? transportNote(scope.transport) : 'sim'}`,
      ...notes,
    ]);
  }
  // OM1's remote connector ignores the model's commands (its connect() does nothing): it drives the Go2 with
  // the velocities OpenMind's hosted teleoperation socket (wss://api.openmind.org/api/core/teleops/action) sends.
  if (connectorName === 'remote')
    return unsupported(
      "OpenMind's hosted teleoperation socket (wss://api.openmind.org/api/core/teleops/action): the robot is driven by the velocities it sends, never by the model",
    );
  if (name === 'navigate_location') return navigate(connectorName, options, scope);
  if (name === 'greeting_conversation') {
    const keys = { finished_key: 'greeting_conversation_finished', state_key: 'greeting_conversation_state' };
    notes.push('each turn {response, conversation_state} is spoken, then greeting_conversation_finished is published (true when finished)');
    if (connectorName === 'greeting_conversation_elevenlabs') {
      return ok(
        {
          name: 'conversation',
          connector: 'speechlab_tts',
          config: { ...pick(options, { voice_id: 'voice', model_id: 'model' }, notes, TTS_DROPPED), ...keys },
        },
        notes,
      );
    }
    if (connectorName === 'greeting_conversation_kokoro' || connectorName === 'greeting_conversation_riva') {
      notes.push('speech by espeak-ng on this machine: the Kokoro/Riva server protocol is not spoken');
      const { voice_id: _v, model_id: _m, base_url: _b, ...rest } = options;
      return ok({ name: 'conversation', connector: 'local_tts', config: { ...pick(rest, {}, notes, TTS_DROPPED), ...keys } }, notes);
    }
    return missing(`greeting conversation connector ${connectorName} has no counterpart`);
  }
  if (
    ['speak', 'move', 'face', 'remember_location'].includes(name) &&
    ['console', 'speechlab_tts', 'speechb_tts', 'local_tts', 'serial', 'websim', 'mqtt', 'state_dir', 'body'].includes(connectorName)
  )
    return ok({ name, connector: connectorName, config: options });
  return missing(`action ${name} with connector ${connectorName} has no counterpart in this runtime`);
}

/** OM1's navigation connectors (Go2, G1, and the generic `nav`): a place from the robot's map server, a Nav2 goal. */
const NAV_CONNECTORS = new Set(['unitree_go2_nav', 'unitree_g1_nav', 'nav', 'nav_go2', 'nav_g1']);

/**
 * OM1's navigate_location looks the place up in the robot's map server (`base_url`, its locations list)
 * and publishes a geometry_msgs/PoseStamped on Nav2's `goal_pose` (over Zenoh, bridged to ROS 2); here
 * the `nav2` connector does the same over DDS, or drives the simulated body under --simulate.
 */
function navigate(connectorName: string, options: Options, scope: Scope): Translation {
  if (!NAV_CONNECTORS.has(connectorName)) return missing(`action navigate_location with connector ${connectorName} has no counterpart in this runtime`);
  const notes: string[] = [];
  const robot = scope.robot ?? (connectorName.includes('g1') ? 'unitree_g1' : 'unitree_go2');
  const binding = scope.simulate ? 'sim' : scope.transport === 'unitree_dds' ? 'unitree_dds' : scope.transport === 'ros2_zenoh' ? 'ros2' : undefined;
  if (!binding)
    return missing("navigate_location: the file names no robot bus this runtime carries (Nav2's goal topic goes over DDS: a Unitree or ROS 2 robot)");
  const url = str(options.base_url) ?? DEFAULT_LOCATIONS_URL;
  notes.push(
    `places from the map server ${url}${options.base_url ? '' : " (OM1's default: the robot's map service)"}`,
    binding === 'sim'
      ? 'the simulated body drives to the place (--simulate)'
      : "a geometry_msgs/PoseStamped goal on /goal_pose over DDS (Nav2's goal topic; OM1 puts it on Zenoh's goal_pose), its status from /navigate_to_pose/_action/status",
  );
  const config: Options = { robot, binding, locations_url: url };
  if (scope.networkInterface && binding !== 'sim') config.network_interface = scope.networkInterface;
  const timeout = num(options.timeout);
  if (timeout !== undefined) config.timeout_seconds = timeout;
  const refresh = num(options.refresh_interval);
  if (refresh !== undefined) config.refresh_seconds = refresh;
  for (const k of Object.keys(options))
    if (!['base_url', 'timeout', 'refresh_interval'].includes(k)) notes.push(`${k} ${JSON.stringify(options[k])}: an option of OM1's connector; left out`);
  return ok({ name: 'navigate_location', connector: 'nav2', config }, notes);
}

// ---- Backgrounds ---------------------------------------------------------------------------------

/** A background's translation: an input entry that runs for the mode, carried by another entry, or missing. */
export function translateBackground(type: string, options: Options, scope: Scope, mode: { hasBody: boolean; hasGps: boolean }): Translation {
  switch (type) {
    case 'UnitreeGo2State':
    case 'UnitreeGo2Odom':
    case 'UnitreeG1Odom':
    case 'Odom':
      if (mode.hasBody) return carried(`the ${scope.robot ?? 'robot'} body of this mode's BodyInput`);
      return body(scope, ['battery', 'odometry'], [], options);
    case 'Gps':
    case 'Rtk':
      if (mode.hasGps) return carried("this mode's GpsInput (the same serial port)");
      return gps(scope, type, options);
    case 'ElevenLabsTTS':
      return carried('the speak action (speechlab_tts synthesises each sentence itself)');
    case 'ApproachingPerson':
      // OM1 hears of an approaching person from the robot's person-following service over Zenoh; here the
      // robot's camera sees a face come into view.
      return ok(
        { type: 'PresenceInput', config: { descriptor: 'Presence', approaching_key: 'approaching_detected', camera: { binding: 'opencv', device: 0 } } },
        ['a face coming into view of camera 0 (OpenCV on the robot) sets approaching_detected; OM1 reads it from its person-following service over Zenoh'],
      );
    case 'RFmapper':
      // OM1's RFmapper scans Bluetooth advertisements with the robot's position and POSTs them to OpenMind's
      // Fabric map service (api.openmind.org/api/core/fabric/submit); nothing of it reaches the model.
      return unsupported("OpenMind's Fabric map service (Bluetooth scans with the robot's position, uploaded to api.openmind.org; nothing reaches the model)");
    case 'RPLidar':
    case 'UnitreeGo2RPLidar':
    case 'TurtleBot4RPLidar':
      // OM1's background only starts the lidar provider that its inputs read.
      return carried(
        "the top-level lidar block (it carries this entry's options): the safety governor holds the lidar for the whole run, LidarInput says its free paths",
      );
    case 'UnitreeGo2AMCL':
    case 'UnitreeGo2LidarLocalization': {
      // OM1's provider reads the robot's localisation (amcl_pose over Zenoh); here the body's binding says where it is on the map.
      const t = body(scope, ['localization'], [], options);
      return t.kind === 'ok'
        ? { ...t, notes: [...t.notes, 'localized and the map pose (OM1: amcl_pose from the robot); the simulated body knows its pose exactly'] }
        : t;
    }
    case 'UnitreeGo2Navigation':
    case 'UnitreeG1Navigation': {
      // OM1's provider follows the Nav2 goal status; the goals come from a navigate action (reported missing where a file has one).
      const t = body(scope, ['navigation'], [], options);
      return t.kind === 'ok'
        ? { ...t, notes: [...t.notes, "the navigation stack's state (OM1: Nav2 goal status); the simulated body follows navigate_location's goals"] }
        : t;
    }
    case 'UnitreeGo2FrontierExploration':
      return missing(`${type}: localisation, navigation and exploration need the robot's Nav2/SLAM stack; none is built into this runtime`);
    case 'UnitreeGo2Locations':
    case 'UnitreeG1Locations':
      return carried("the mode's remember_locations (locations.json in the state directory)");
    default:
      return missing(`background ${type} has no counterpart in this runtime`);
  }
}

// ---- Simulators ----------------------------------------------------------------------------------

/** OM1's WebSim options: the page's address and port are kept; its tick rate and debug switches are OM1's page's own. */
export function translateSimulator(type: string, options: Options): Translation {
  if (type !== 'WebSim') return missing(`simulator ${type} has no counterpart in this runtime (WebSim)`);
  const notes: string[] = [];
  const config = pick(options, { host: 'host', port: 'port', token: 'token' }, notes, {
    tick_rate: "OM1's page refresh; this page is pushed every agent event",
    auto_reconnect: 'the page always reconnects',
    debug_mode: 'the page always shows every event',
  });
  if (config.host === '0.0.0.0' && config.token === undefined) {
    notes.push('host 0.0.0.0 -> 127.0.0.1 (a page reachable from the network needs a token here; set host and token to open it)');
    config.host = '127.0.0.1';
  }
  return ok({ type: 'WebSim', config }, notes);
}

// ---- Lifecycle hooks -----------------------------------------------------------------------------

/** OM1's farewell (greeting_hook.geeting_end_hook) says one of three sentences by the turn count; here the middle one. */
const FAREWELL = 'It was nice talking with you! If you have any more questions, come chat with me again!';

/**
 * A `function` hook names OM1's Python code (`module_name`.`function`), which this runtime cannot run:
 * the greeting farewell becomes an action hook on the mode's conversation; the rest are missing.
 */
export function translateHook(hook: Entry, conversationLabel: string | undefined, hasSpeak: boolean): Translation {
  const config = (typeof hook.handler_config === 'object' && hook.handler_config !== null ? hook.handler_config : {}) as Options;
  if (hook.handler_type === 'message') {
    const { message, tts_provider, model_id, base_url, voice_id, ...rest } = config;
    const dropped = Object.entries({ tts_provider, model_id, base_url, voice_id }).filter(([, v]) => v !== undefined);
    if (dropped.length === 0 && (hasSpeak || !conversationLabel)) return ok(hook);
    const notes = dropped.map(([k, v]) => `${k} ${JSON.stringify(v)}: the message is spoken by the mode's own speech connector`);
    if (!hasSpeak && conversationLabel) {
      notes.push(`no speak action in this mode: the message is said by the ${conversationLabel} action (as a conversing turn)`);
      return ok(
        {
          ...hook,
          handler_type: 'action',
          handler_config: { ...rest, action: conversationLabel, value: { response: message, conversation_state: 'conversing' } },
          timeout_seconds: typeof hook.timeout_seconds === 'number' ? hook.timeout_seconds : 15,
        },
        hook.timeout_seconds === undefined ? [...notes, 'timeout 15 s (a spoken sentence outlasts the default 5 s)'] : notes,
      );
    }
    return ok({ ...hook, handler_config: { ...rest, message } }, notes);
  }
  if (hook.handler_type !== 'function') return ok(hook);
  const fn = `${String(config.module_name ?? '')}.${String(config.function ?? '')}`;
  if (fn === 'greeting_hook.geeting_end_hook' && conversationLabel) {
    return ok(
      { ...hook, handler_type: 'action', handler_config: { action: conversationLabel, value: { response: FAREWELL, conversation_state: 'concluding' } } },
      [
        `OM1's Python farewell -> the ${conversationLabel} action says "${FAREWELL}" (OM1 picks one of three by the turn count); its TTS options are the action's`,
      ],
    );
  }
  return missing(
    `function hook ${fn} is OM1's Python code (${/slam|nav2/.test(fn) ? "it starts or stops the robot's SLAM/Nav2 stack" : 'not portable'}); hooks here run JavaScript modules in config/hooks/`,
  );
}
