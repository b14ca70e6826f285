// The built-in actions (speak, move, face): their tool arguments, queue policies and connectors.
import { z } from 'zod';
import { Registry } from '../../src/plugin-registry.js';
import type { ActionPluginSpec, ConnectorFactory } from '../../src/cortex/action.js';
import { consoleConnector } from './connectors/console.js';
import { faceSerialConnector, moveSerialConnector } from './connectors/serial.js';
import { localTtsConnector, speechbTtsConnector, speechlabTtsConnector } from './connectors/speech.js';
import { websimFaceConnector } from './connectors/websim.js';
export { rememberLocationAction } from './locations.js';

/** Options every action accepts in its `config` block; connectors add their own. */
export const ActionOptions = z.looseObject({});

export const speakAction: ActionPluginSpec = {
  type: 'speak',
  description: 'say a sentence out loud',
  schema: ActionOptions,
  args: z.object({ sentence: z.string().min(1).describe('what to say, one or two short sentences') }),
  queue: 'queue',
  connectors: new Registry<ConnectorFactory>('connector', [consoleConnector('speak'), speechlabTtsConnector, speechbTtsConnector, localTtsConnector]),
};

export const MOVES = ['stand still', 'sit', 'walk forward', 'walk back', 'turn left', 'turn right', 'shake paw', 'dance'] as const;

export const moveAction: ActionPluginSpec = {
  type: 'move',
  description: 'move the body',
  schema: ActionOptions,
  args: z.object({ action: z.enum(MOVES).describe('the movement to make') }),
  queue: 'latest',
  connectors: new Registry<ConnectorFactory>('connector', [consoleConnector('move'), moveSerialConnector]),
};

export const EMOTIONS = ['neutral', 'joy', 'smile', 'think', 'confused', 'sad', 'surprised', 'curious'] as const;

export const faceAction: ActionPluginSpec = {
  type: 'face',
  description: 'show a facial expression',
  schema: ActionOptions,
  args: z.object({ emotion: z.enum(EMOTIONS).describe('the expression to show') }),
  queue: 'latest',
  connectors: new Registry<ConnectorFactory>('connector', [consoleConnector('face'), faceSerialConnector, websimFaceConnector]),
};
