// Descriptors of the robot-body plugins: BodyInput and the `body` move connector (simulated body; real buses refused at check).
import { connector, descriptor } from './define.js';
import { BodyConnectorOptions, BodyInputSchema } from './schemas/body.js';
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
