// Descriptors of any ROS 2 topic as an input (Ros2TopicInput) and as a model action (ros2_publish, connector ros2_topic), over DDS.
import { connector, descriptor } from './define.js';
import { Registry } from './registry.js';
import { ActionOptions } from './schemas/actions.js';
import { Ros2TopicConnectorOptions, Ros2TopicInputSchema, ros2PublishArgs } from './schemas/ros2.js';
import type { ActionDescriptor, InputDescriptor } from './types.js';

export const ros2TopicInput: InputDescriptor = descriptor({
  type: 'Ros2TopicInput',
  description: 'any ROS 2 topic over DDS (a topic and its message type) as prompt lines: a template or a compact rendering, rate-limited and bounded',
  schema: Ros2TopicInputSchema,
});

export const ros2TopicConnector = connector({
  type: 'ros2_topic',
  description:
    "publishes one message of the configured ROS 2 type on the configured topic over DDS, its fields from the model's arguments (validated) and `fixed`",
  schema: Ros2TopicConnectorOptions,
});

/**
 * `ros2_publish`: the model's arguments are the entry's own (`config.args`), so one configuration can
 * offer `set_led {r, g, b}` and another `say_on_screen {text}` with no code. Not motion: the connector
 * refuses the types that move a robot (they go through `move` and the safety governor).
 */
export const ros2PublishAction: ActionDescriptor = {
  type: 'ros2_publish',
  description: 'publish a message on a ROS 2 topic',
  schema: ActionOptions,
  args: ros2PublishArgs({}),
  argsOf: ros2PublishArgs,
  queue: 'queue',
  connectors: new Registry('connector', [ros2TopicConnector]),
};
