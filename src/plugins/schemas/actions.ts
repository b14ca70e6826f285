// The tool arguments of the built-in actions and the config blocks of their connectors, as zod schemas: data only.
import { z } from 'zod';
import { SpeakerConfigSchema } from './devices.js';

/** Options every action accepts in its `config` block; connectors add their own. */
export const ActionOptions = z.looseObject({});

// Tool arguments the model sends (each becomes the tool's JSON schema).

export const SpeakArgs = z.object({ sentence: z.string().min(1).describe('what to say, one or two short sentences') });

export const MOVES = ['stand still', 'sit', 'walk forward', 'walk back', 'turn left', 'turn right', 'shake paw', 'dance'] as const;
export const MoveArgs = z.object({ action: z.enum(MOVES).describe('the movement to make') });

export const EMOTIONS = ['neutral', 'joy', 'smile', 'think', 'confused', 'sad', 'surprised', 'curious'] as const;
export const FaceArgs = z.object({ emotion: z.enum(EMOTIONS).describe('the expression to show') });

/** Arm gestures a Unitree G1's firmware performs (its arm action API's built-in actions). */
export const ARM_GESTURES = [
  'release arm',
  'left kiss',
  'right kiss',
  'hands up',
  'clap',
  'high five',
  'hug',
  'heart',
  'face wave',
  'high wave',
  'shake hand',
] as const;
export const ArmArgs = z.object({ action: z.enum(ARM_GESTURES).describe('the arm gesture to make ("release arm" lowers a held gesture)') });

/** The `unitree_arm` connector of arm: a Unitree G1's arm action API over DDS. */
export const UnitreeArmOptions = z.looseObject({
  robot: z.literal('unitree_g1').default('unitree_g1'),
  domain_id: z.number().int().min(0).max(232).optional(),
  network_interface: z.string().min(1).optional(),
});

export const RememberLocationArgs = z.object({
  name: z.string().trim().min(1).max(80).describe('a short name for the place where the robot is now, e.g. "kitchen"'),
  lat: z.number().min(-90).max(90).optional().describe('latitude in degrees, only when told explicitly'),
  lon: z.number().min(-180).max(180).optional().describe('longitude in degrees, only when told explicitly'),
});

// Connectors.

export const ConsoleOptions = z.looseObject({
  /** Text before each line; default `[<action>]`. */
  prefix: z.string().optional(),
});

/** The `unitree_led` connector of face: a Unitree G1's head LED over DDS (its voice API). */
export const UnitreeLedOptions = z.looseObject({
  robot: z.literal('unitree_g1').default('unitree_g1'),
  domain_id: z.number().int().min(0).max(232).optional(),
  network_interface: z.string().min(1).optional(),
});

export const SerialConnectorOptions = z.looseObject({
  binding: z.enum(['serialport', 'mock']).default('serialport'),
  path: z.string().min(1),
  baud_rate: z.number().int().positive().default(115200),
  /** Seconds to wait for `OK`/`ERR` after a command. */
  ack_timeout_seconds: z.number().positive().default(2),
  /** Line sent when a running command is interrupted; empty to send nothing. */
  stop_line: z.string().optional(),
});
export type SerialConnectorOptions = z.infer<typeof SerialConnectorOptions>;

/** Where the audio goes: the speaker device's config (`player`, `file` or `null` binding). Default: a player on PATH. */
export const SpeakerField = SpeakerConfigSchema.default({ binding: 'player' });

export const SpeechlabTtsOptions = z.looseObject({
  voice: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  /** `pcm_<rate>`, `wav_<rate>` or `mp3_<rate>_<kbps>`; default raw PCM so aplay can play it (MP3 needs ffplay). */
  response_format: z
    .string()
    .regex(/^(pcm|wav)_\d+$|^mp3_\d+_\d+$/, 'pcm_<rate>, wav_<rate> or mp3_<rate>_<kbps>')
    .default('pcm_22050'),
  speed: z.number().min(0.5).max(2).optional(),
  speaker: SpeakerField,
});

export const SpeechbTtsOptions = z.looseObject({
  voice: z.string().min(1).optional(),
  language_code: z.string().min(1).optional(),
  speaker: SpeakerField,
});

export const LocalTtsOptions = z.looseObject({
  /** espeak-ng voice, e.g. `en-us`, `de`, `en+f3`. */
  voice: z.string().min(1).default('en-us'),
  /** Words per minute (espeak-ng `-s`). */
  speed: z.number().int().min(80).max(450).default(170),
  /** Program to run; default `espeak-ng` on PATH. */
  command: z.string().min(1).default('espeak-ng'),
  speaker: SpeakerField,
});

export const WebsimFaceOptions = z.looseObject({});

export const StateConnectorOptions = z.looseObject({
  /** Oldest GPS fix accepted, in seconds. */
  max_fix_age_seconds: z.number().positive().default(60),
});

// The conversation action (a greeting conversation that says when it is over).

export const CONVERSATION_STATES = ['conversing', 'concluding', 'finished'] as const;
export const ConversationArgs = z.object({
  response: z.string().min(1).describe('what to say to the person, one or two short sentences'),
  conversation_state: z.enum(CONVERSATION_STATES).describe('finished once the person said goodbye or the conversation is over'),
});

/** What every conversation connector adds to its speech options: the context keys it publishes after each turn. */
const ConversationKeys = {
  /** Set true after a turn whose state is `finished`, false after any other turn. */
  finished_key: z.string().min(1).default('conversation_finished'),
  /** The state of the last turn. */
  state_key: z.string().min(1).default('conversation_state'),
};
export const ConversationSpeechlabOptions = SpeechlabTtsOptions.extend(ConversationKeys);
export const ConversationLocalOptions = LocalTtsOptions.extend(ConversationKeys);
export const ConversationConsoleOptions = ConsoleOptions.extend(ConversationKeys);
