// Descriptor of navigate_location: the model names a known place and the robot's navigation goes there (the simulated body, or a Nav2 goal over DDS).
import { connector } from './define.js';
import { Registry } from './registry.js';
import { ActionOptions } from './schemas/actions.js';
import { NavigateArgs, NavigateConnectorOptions } from './schemas/navigate.js';
import type { ActionDescriptor } from './types.js';

export const navigateAction: ActionDescriptor = {
  type: 'navigate_location',
  description: 'go to a known place on the map by its name',
  schema: ActionOptions,
  args: NavigateArgs,
  queue: 'latest',
  connectors: new Registry('connector', [
    connector({
      type: 'nav2',
      description:
        "looks the place up (the file's locations, or a map server's list) and goes there: binding sim drives the simulated body; ros2/unitree_dds publish a geometry_msgs/PoseStamped goal for Nav2 over DDS and follow its status",
      schema: NavigateConnectorOptions,
      motion: true,
    }),
  ]),
};
