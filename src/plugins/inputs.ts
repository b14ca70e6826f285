// Descriptors of the input plugins: type, description, config schema and the devices a block uses; the code is in actors/inputs/.
import { brokerNeeds, cameraNeeds, descriptor, microphoneNeeds, serialNeeds } from './define.js';
import { MqttInputSchema } from './schemas/mqtt.js';
import { Registry } from './registry.js';
import {
  BatteryInputSchema,
  GpsInputSchema,
  LocalVLMInputSchema,
  SerialReaderSchema,
  SpeechbASRInputSchema,
  SpeechlabASRInputSchema,
  TextInputOptions,
  VLMInputSchema,
  serialConfigOf,
} from './schemas/inputs.js';
import type { InputDescriptor } from './types.js';
import { bodyInput, lidarInput, presenceInput } from './body.js';
import { ros2TopicInput } from './ros2.js';

export const textInput: InputDescriptor = {
  ...descriptor({
    type: 'TextInput',
    description: 'typed lines from stdin, a FIFO or a unix socket',
    schema: TextInputOptions,
  }),
  typedText: true,
};

export const speechlabAsrInput = descriptor({
  type: 'SpeechlabASRInput',
  description: 'microphone to the hosted speechlab recognition socket; final transcripts as "Voice:" lines',
  schema: SpeechlabASRInputSchema,
  needs: (c) => [...microphoneNeeds(c.microphone), { kind: 'service', address: 'ws_base_url' }],
});

export const speechbAsrInput = descriptor({
  type: 'SpeechbASRInput',
  description: 'microphone to the second hosted recognition socket (speechb); final transcripts as "Voice:" lines',
  schema: SpeechbASRInputSchema,
  needs: (c) => [...microphoneNeeds(c.microphone), { kind: 'service', address: 'asr_ws_url' }],
});

export const vlmInput = descriptor({
  type: 'VLMInput',
  description: 'camera to the hosted vision socket; the newest description as a "Vision:" line',
  schema: VLMInputSchema,
  needs: (c) => [...cameraNeeds(c.camera), { kind: 'service', address: 'vlm_ws_url' }],
});

export const localVlmInput = descriptor({
  type: 'LocalVLMInput',
  description: 'faces and motion from the camera, described on the robot with OpenCV (no network)',
  schema: LocalVLMInputSchema,
  needs: (c) => cameraNeeds(c.camera),
});

export const serialReader = descriptor({
  type: 'SerialReader',
  description: 'lines from a serial port (reopened after an unplug) as "Serial:" lines',
  schema: SerialReaderSchema,
  needs: (c) => serialNeeds(c.binding, serialConfigOf(c).path),
});

export const gpsInput = descriptor({
  type: 'GpsInput',
  description: 'NMEA GPS on a serial port: fix, position, speed and course as a "GPS:" line',
  schema: GpsInputSchema,
  needs: (c) => serialNeeds(c.binding, serialConfigOf(c).path),
});

export const batteryInput = descriptor({
  type: 'BatteryInput',
  description: 'battery charge and status from Linux power_supply (sysfs) or a battery board\'s serial lines as a "Battery:" line',
  schema: BatteryInputSchema,
});

export const mqttInput = descriptor({
  type: 'MqttInput',
  description: 'messages on MQTT topics (sensors, microcontrollers, ROS 2 through its MQTT bridge) as prompt lines, through a small template',
  schema: MqttInputSchema,
  needs: (c) => brokerNeeds(c.url),
});

/** Input plugins, by `agent_inputs[].type`. */
export const inputDescriptors = new Registry<InputDescriptor>('input', [
  textInput,
  speechlabAsrInput,
  speechbAsrInput,
  vlmInput,
  localVlmInput,
  serialReader,
  gpsInput,
  batteryInput,
  mqttInput,
  bodyInput,
  lidarInput,
  presenceInput,
  ros2TopicInput,
]);
