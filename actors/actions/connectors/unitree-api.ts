// A Unitree G1's API services over DDS as connectors: `unitree_led` (face: the head LED) and `unitree_arm` (arm: built-in gestures).
// The LED is api 1010 of rt/api/voice/request; the gestures are api 7106 of rt/api/arm/request.
import { CortexError, describeError } from '../../../src/errors.js';
import type { ActionConnector, ConnectorFactory } from '../../../src/cortex/action.js';
import { UnitreeArmOptions, UnitreeLedOptions } from '../../../src/plugins/schemas/actions.js';
import { DdsParticipant } from '../../../devices/dds/participant.js';

/** unitree_sdk2's g1 AudioClient: LedControl is api 1010 of the `voice` service, parameter {"R","G","B"}. */
export const VOICE_REQUEST_TOPIC = 'rt/api/voice/request';
export const LED_API = 1010;

/**
 * Colours by expression. OM1's emotion connector lights happy green, sad yellow, mad red and curious blue;
 * the expressions this runtime's face offers take the nearest of those, and white for neutral.
 */
export const LED_COLOURS: Record<string, [number, number, number]> = {
  neutral: [255, 255, 255],
  joy: [0, 255, 0],
  smile: [0, 255, 0],
  sad: [255, 255, 0],
  confused: [255, 0, 0],
  surprised: [255, 0, 255],
  think: [0, 0, 255],
  curious: [0, 0, 255],
};

interface Request {
  header: { identity: { id: bigint; api_id: bigint }; lease: { id: bigint }; policy: { priority: number; noreply: boolean } };
  parameter: string;
  binary: Uint8Array;
}

/** Each face command is one LedControl request (no reply awaited: the G1 answers LedControlNoReply calls with none, as OM1 sends them). */
export const createUnitreeLedConnector: ConnectorFactory = (raw, ctx): ActionConnector => {
  const o = UnitreeLedOptions.parse(raw ?? {});
  const participant = DdsParticipant.open({ domain: o.domain_id, networkInterface: o.network_interface });
  const untap = ctx.media?.dds ? participant.tap(ctx.media) : undefined;
  const writer = participant.writer<Request>(VOICE_REQUEST_TOPIC, 'unitree_api/msg/Request_');
  let seq = 0;
  return {
    name: 'unitree_led',
    async run(value, signal) {
      signal.throwIfAborted();
      const emotion = String((value as { emotion?: unknown })?.emotion ?? '');
      const rgb = LED_COLOURS[emotion];
      if (!rgb) throw new CortexError('unitree_led', `no LED colour for expression "${emotion}"; known: ${Object.keys(LED_COLOURS).join(', ')}`);
      const id = BigInt(Date.now()) * 1000n + BigInt(seq++ % 1000);
      try {
        writer.publish({
          header: { identity: { id, api_id: BigInt(LED_API) }, lease: { id: 0n }, policy: { priority: 0, noreply: true } },
          parameter: JSON.stringify({ R: rgb[0], G: rgb[1], B: rgb[2] }),
          binary: new Uint8Array(0),
        });
      } catch (err) {
        throw new CortexError('unitree_led', `publishing on ${VOICE_REQUEST_TOPIC} failed: ${describeError(err)}`, { cause: err });
      }
      ctx.write(`[face] ${emotion}: head LED ${rgb.join(', ')}`);
    },
    async stop() {
      writer.close();
      untap?.();
      participant.close();
    },
  };
};

/** unitree_sdk2's G1ArmActionClient: ExecuteAction is api 7106 of the `arm` service, parameter {"data": id}. */
export const ARM_REQUEST_TOPIC = 'rt/api/arm/request';
export const ARM_API = 7106;
/** The firmware's action ids (unitree_sdk2's g1_arm_action_client action_map). */
export const ARM_ACTION_IDS: Record<string, number> = {
  'release arm': 99,
  'left kiss': 12,
  'right kiss': 13,
  'hands up': 15,
  clap: 17,
  'high five': 18,
  hug: 19,
  heart: 20,
  'face wave': 25,
  'high wave': 26,
  'shake hand': 27,
};

/**
 * Each gesture is one ExecuteAction request. Motion: the governor gates it; a halt sends `release arm`
 * (the firmware holds some gestures until released), once per command.
 */
export const createUnitreeArmConnector: ConnectorFactory = (raw, ctx): ActionConnector => {
  const o = UnitreeArmOptions.parse(raw ?? {});
  const participant = DdsParticipant.open({ domain: o.domain_id, networkInterface: o.network_interface });
  const untap = ctx.media?.dds ? participant.tap(ctx.media) : undefined;
  const writer = participant.writer<Request>(ARM_REQUEST_TOPIC, 'unitree_api/msg/Request_');
  let seq = 0;
  let released = true;
  const execute = (id: number) => {
    const rid = BigInt(Date.now()) * 1000n + BigInt(seq++ % 1000);
    try {
      writer.publish({
        header: { identity: { id: rid, api_id: BigInt(ARM_API) }, lease: { id: 0n }, policy: { priority: 0, noreply: false } },
        parameter: JSON.stringify({ data: id }),
        binary: new Uint8Array(0),
      });
    } catch (err) {
      throw new CortexError('unitree_arm', `publishing on ${ARM_REQUEST_TOPIC} failed: ${describeError(err)}`, { cause: err });
    }
  };
  return {
    name: 'unitree_arm',
    async run(value, signal) {
      signal.throwIfAborted();
      const gesture = String((value as { action?: unknown })?.action ?? '');
      const id = ARM_ACTION_IDS[gesture];
      if (id === undefined) throw new CortexError('unitree_arm', `no G1 arm gesture "${gesture}"; known: ${Object.keys(ARM_ACTION_IDS).join(', ')}`);
      execute(id);
      released = id === 99;
      ctx.write(`[arm] ${gesture} (action ${id})`);
    },
    async halt() {
      if (released) return;
      released = true;
      execute(ARM_ACTION_IDS['release arm']!);
      ctx.write('[arm] release arm (halt)');
    },
    async stop() {
      writer.close();
      untap?.();
      participant.close();
    },
  };
};
