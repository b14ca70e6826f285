// The registry of concrete plugins handed to the agent: every descriptor of src/plugins/ paired with a lazy loader of its code.
import { descriptors } from '../src/plugins/index.js';
import { pluginRegistry } from '../src/cortex/plugins-resolve.js';
import type { PluginRegistry } from '../src/cortex/plugins.js';

export { resolvePlugins, withPlugins, type ExtraPlugins } from '../src/cortex/plugins-resolve.js';
export type { Plugins, PluginRegistry } from '../src/cortex/plugins.js';
export type { PluginUse } from '../src/config/used-plugins.js';

/*
 * Each loader imports its module only when a configuration uses the plugin (`resolvePlugins`), so
 * `cortexd check` reads the descriptors alone and a robot without a camera never loads OpenCV.
 * `pluginRegistry` refuses a descriptor without a loader or a loader without a descriptor.
 */
export const builtinPlugins: PluginRegistry = pluginRegistry(descriptors, {
  inputs: {
    TextInput: () => import('./inputs/text-input.js').then((m) => m.createTextInput),
    SpeechlabASRInput: () => import('./inputs/asr-input.js').then((m) => m.createSpeechlabAsrInput),
    SpeechbASRInput: () => import('./inputs/asr-input.js').then((m) => m.createSpeechbAsrInput),
    VLMInput: () => import('./inputs/vlm-input.js').then((m) => m.createVlmInput),
    LocalVLMInput: () => import('./inputs/local-vlm-input.js').then((m) => m.createLocalVlmInput),
    SerialReader: () => import('./inputs/serial-reader.js').then((m) => m.createSerialReader),
    GpsInput: () => import('./inputs/gps-input.js').then((m) => m.createGpsInput),
    BatteryInput: () => import('./inputs/battery-input.js').then((m) => m.createBatteryInput),
    MqttInput: () => import('./inputs/mqtt-input.js').then((m) => m.createMqttInput),
    BodyInput: () => import('./inputs/body-input.js').then((m) => m.createBodyInput),
    LidarInput: () => import('./inputs/lidar-input.js').then((m) => m.createLidarInput),
    PresenceInput: () => import('./backgrounds/presence.js').then((m) => m.createPresenceInput),
    Ros2TopicInput: () => import('./inputs/ros2-topic-input.js').then((m) => m.createRos2TopicInput),
  },
  llms: {
    CloudLLM: () => import('../src/cortex/llm/cloud-llm.js').then((m) => m.createCloudLlm),
    LocalLLM: () => import('../src/cortex/llm/local-llm.js').then((m) => m.createLocalLlm),
    MultiLLM: () => import('../src/cortex/llm/multi-llm.js').then((m) => m.createMultiLlm),
  },
  connectors: {
    speak: {
      console: () => import('./actions/connectors/console.js').then((m) => m.createConsoleConnector('speak')),
      speechlab_tts: () => import('./actions/connectors/speech.js').then((m) => m.createSpeechlabTtsConnector),
      speechb_tts: () => import('./actions/connectors/speech.js').then((m) => m.createSpeechbTtsConnector),
      local_tts: () => import('./actions/connectors/speech.js').then((m) => m.createLocalTtsConnector),
      mqtt: () => import('./actions/connectors/mqtt.js').then((m) => m.createMqttConnector('speak')),
    },
    move: {
      console: () => import('./actions/connectors/console.js').then((m) => m.createConsoleConnector('move')),
      serial: () => import('./actions/connectors/serial.js').then((m) => m.createMoveSerialConnector),
      mqtt: () => import('./actions/connectors/mqtt.js').then((m) => m.createMqttConnector('move')),
      body: () => import('./actions/connectors/body.js').then((m) => m.createBodyConnector),
    },
    face: {
      console: () => import('./actions/connectors/console.js').then((m) => m.createConsoleConnector('face')),
      serial: () => import('./actions/connectors/serial.js').then((m) => m.createFaceSerialConnector),
      websim: () => import('./actions/connectors/websim.js').then((m) => m.createWebsimFaceConnector),
      mqtt: () => import('./actions/connectors/mqtt.js').then((m) => m.createMqttConnector('face')),
      unitree_led: () => import('./actions/connectors/unitree-api.js').then((m) => m.createUnitreeLedConnector),
    },
    conversation: {
      speechlab_tts: () => import('./actions/connectors/conversation.js').then((m) => m.createConversationConnector('speechlab_tts')),
      local_tts: () => import('./actions/connectors/conversation.js').then((m) => m.createConversationConnector('local_tts')),
      console: () => import('./actions/connectors/conversation.js').then((m) => m.createConversationConnector('console')),
    },
    ros2_publish: {
      ros2_topic: () => import('./actions/connectors/ros2-topic.js').then((m) => m.createRos2TopicConnector),
    },
    arm: {
      console: () => import('./actions/connectors/console.js').then((m) => m.createConsoleConnector('arm')),
      unitree_arm: () => import('./actions/connectors/unitree-api.js').then((m) => m.createUnitreeArmConnector),
    },
    navigate_location: {
      nav2: () => import('./actions/connectors/nav2.js').then((m) => m.createNav2Connector),
    },
    remember_location: {
      state_dir: () => import('./actions/locations.js').then((m) => m.createStateDirConnector),
    },
  },
  simulators: {
    WebSim: () => import('../src/websim/plugin.js').then((m) => m.createWebSim),
  },
});
