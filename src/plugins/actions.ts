// Descriptors of the built-in actions (speak, move, face, remember_location): tool arguments, queue policy, and their connectors.
import { brokerNeeds, connector, serialNeeds, speakerNeeds } from './define.js';
import { MqttConnectorOptions } from './schemas/mqtt.js';
import { Registry } from './registry.js';
import {
  ActionOptions,
  ArmArgs,
  ConsoleOptions,
  FaceArgs,
  LocalTtsOptions,
  MoveArgs,
  RememberLocationArgs,
  SerialConnectorOptions,
  SpeakArgs,
  SpeechbTtsOptions,
  SpeechlabTtsOptions,
  StateConnectorOptions,
  UnitreeArmOptions,
  UnitreeLedOptions,
  WebsimFaceOptions,
} from './schemas/actions.js';
import type { ActionDescriptor, ConnectorDescriptor } from './types.js';
import { bodyConnector } from './body.js';
import { conversationAction } from './conversation.js';
import { ros2PublishAction } from './ros2.js';
import { navigateAction } from './navigate.js';

/**
 * The `console` connector of every action: prints what the robot would do. `move`'s counts as motion
 * (a simulated body): the safety governor gates it as it gates the serial motor controller, so limits,
 * the dead-man timer and the e-stop can be tried on any machine; its stop command prints "stand still".
 */
export const consoleConnector = (action: string, motion = false): ConnectorDescriptor =>
  connector({ type: 'console', description: `prints each ${action} command on the terminal (or as an event)`, schema: ConsoleOptions, motion });

/** The `serial` connector of move and face: one `<VERB> <value>` line per command to a controller. */
export const serialConnector = (verb: string, field: string, motion: boolean): ConnectorDescriptor =>
  connector({
    type: 'serial',
    description: `sends \`${verb} <${field}>\\n\` to a controller on a serial port and waits for OK / ERR <text>`,
    schema: SerialConnectorOptions,
    needs: (c) => serialNeeds(c.binding, c.path),
    motion,
  });

/** The `mqtt` connector of move, face and speak: one JSON message per command to a topic (microcontrollers, ROS 2 through its MQTT bridge). */
export const mqttConnector = (action: string, motion: boolean): ConnectorDescriptor =>
  connector({
    type: 'mqtt',
    description: `publishes each ${action} command as JSON {action, value, id, at} to an MQTT topic; done when the broker acknowledged it`,
    schema: MqttConnectorOptions,
    needs: (c) => brokerNeeds(c.url),
    motion,
  });

export const speechlabTts = connector({
  type: 'speechlab_tts',
  description: 'speaks through the hosted speechlab TTS (POST /speechlab/tts) and the speaker',
  schema: SpeechlabTtsOptions,
  needs: (c) => [{ kind: 'service', address: 'base_url' }, ...speakerNeeds(c.speaker)],
});

export const speechbTts = connector({
  type: 'speechb_tts',
  description: 'speaks through the hosted speechb TTS (POST /api/core/speechb/tts) and the speaker',
  schema: SpeechbTtsOptions,
  needs: (c) => [{ kind: 'service', address: 'base_url' }, ...speakerNeeds(c.speaker)],
});

export const localTts = connector({
  type: 'local_tts',
  description: 'speaks with espeak-ng on this machine (no network) through the speaker',
  schema: LocalTtsOptions,
  needs: (c) => speakerNeeds(c.speaker),
});

export const unitreeLed = connector({
  type: 'unitree_led',
  description: "shows the expression as the colour of a Unitree G1's head LED (its voice API's LedControl over DDS)",
  schema: UnitreeLedOptions,
});

export const websimFace = connector({
  type: 'websim',
  description: 'shows the expression on the WebSim page (through the agent event bus)',
  schema: WebsimFaceOptions,
});

export const stateDirConnector = connector({
  type: 'state_dir',
  description: 'stores the place in locations.json in the state directory, at the latest GPS fix (or the given lat/lon)',
  schema: StateConnectorOptions,
});

export const speakAction: ActionDescriptor = {
  type: 'speak',
  description: 'say a sentence out loud',
  schema: ActionOptions,
  args: SpeakArgs,
  queue: 'queue',
  connectors: new Registry('connector', [consoleConnector('speak'), speechlabTts, speechbTts, localTts, mqttConnector('speak', false)]),
};

export const moveAction: ActionDescriptor = {
  type: 'move',
  description: 'move the body',
  schema: ActionOptions,
  args: MoveArgs,
  queue: 'latest',
  connectors: new Registry('connector', [consoleConnector('move', true), serialConnector('MOVE', 'action', true), mqttConnector('move', true), bodyConnector]),
};

export const faceAction: ActionDescriptor = {
  type: 'face',
  description: 'show a facial expression',
  schema: ActionOptions,
  args: FaceArgs,
  queue: 'latest',
  connectors: new Registry('connector', [
    consoleConnector('face'),
    serialConnector('FACE', 'emotion', false),
    websimFace,
    mqttConnector('face', false),
    unitreeLed,
  ]),
};

/** `arm`: a gesture of the robot's arms; it moves the robot, so the safety governor gates it as it gates move. */
export const armAction: ActionDescriptor = {
  type: 'arm',
  description: "make a gesture with the robot's arms",
  schema: ActionOptions,
  args: ArmArgs,
  queue: 'latest',
  connectors: new Registry('connector', [
    consoleConnector('arm', true),
    connector({
      type: 'unitree_arm',
      description:
        "a Unitree G1's built-in arm gestures through its arm action API over DDS (rt/api/arm/request, ExecuteAction 7106); a halt sends release arm",
      schema: UnitreeArmOptions,
      motion: true,
    }),
  ]),
};

export const rememberLocationAction: ActionDescriptor = {
  type: 'remember_location',
  description: 'remember the place where the robot is now under a name',
  schema: ActionOptions,
  args: RememberLocationArgs,
  queue: 'queue',
  connectors: new Registry('connector', [stateDirConnector]),
};

/** Action plugins, by `agent_actions[].name`; each holds its connectors. */
export const actionDescriptors = new Registry<ActionDescriptor>('action', [
  speakAction,
  moveAction,
  faceAction,
  rememberLocationAction,
  conversationAction,
  ros2PublishAction,
  navigateAction,
  armAction,
]);
