// Descriptors of the robot-body plugins: BodyInput and the `body` move connector (simulated body; real buses refused at check).
import { cameraNeeds, connector, descriptor } from './define.js';
import { BodyConnectorOptions, BodyInputSchema, LidarInputSchema, PresenceInputSchema } from './schemas/body.js';
import type { ConnectorDescriptor, InputDescriptor } from './types.js';

export const bodyInput: InputDescriptor = descriptor({
  type: 'BodyInput',
  description: 'a robot body\'s battery, odometry and free paths as a "Body:" line and context values (binding sim: a simulated body)',
  schema: BodyInputSchema,
});

export const bodyConnector: ConnectorDescriptor = connector({
  type: 'body',
  description: "moves the robot's body (binding sim: the simulated body, whose pose BodyInput reports)",
  schema: BodyConnectorOptions,
  motion: true,
});

export const presenceInput: InputDescriptor = descriptor({
  type: 'PresenceInput',
  description: 'a person in front of the camera (OpenCV faces on the robot): presence and approach as context values and a "Presence:" line',
  schema: PresenceInputSchema,
  needs: (c) => cameraNeeds(c.camera),
});

export const lidarInput: InputDescriptor = descriptor({
  type: 'LidarInput',
  description: "the free paths around the robot from its lidar (the configuration's `lidar` block) as a line and context values",
  schema: LidarInputSchema,
});
