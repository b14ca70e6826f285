// Whom a robot believes on the fleet: decided once from its own file, applied to each command by its signature and by whether the broker lets anyone in.
import type { KeyObject } from 'node:crypto';
import type { FleetSettings } from '../config/fleet.js';
import type { Anonymity } from '../mqtt/anonymous-probe.js';
import { parsePublicKey, verifyCommand } from './identity.js';
import type { FleetCommand } from './protocol.js';

export interface FleetTrust {
  keys: KeyObject[];
  acceptAnonymousBroker: boolean;
}

/** The trust of a robot's own fleet settings (the keys were checked at load). */
export function trustOf(settings: Pick<FleetSettings, 'operatorKeys' | 'acceptAnonymousBroker'>): FleetTrust {
  return { keys: (settings.operatorKeys ?? []).map(parsePublicKey), acceptAnonymousBroker: settings.acceptAnonymousBroker ?? false };
}

/**
 * Who a command is known to come from:
 * - `operator`: signed by a key of `fleet.operator_keys`;
 * - `broker`: unsigned, from a broker that refuses clients without credentials, on a robot that lists
 *   no operator key (the broker's users and ACL are then the only identity there is);
 * - `anyone`: otherwise. Such a command may not release the e-stop or relax safety.
 */
export type Sender = 'operator' | 'broker' | 'anyone';

export type Admission = { ok: true; sender: Sender; key?: string } | { ok: false; reason: string };

const ANONYMOUS =
  "this robot's broker lets in clients without credentials, so anyone who reaches it could have sent this; refused (give the broker users, sign commands with a key of fleet.operator_keys, or set fleet.accept_anonymous_broker: true in the robot's own file)";

/**
 * Admits `cmd` or says why not. A bad signature is always refused; `estop` is always admitted (a
 * stop is never the dangerous direction); on an open broker unsigned commands are refused unless
 * the robot accepts that; `release` needs an identity (`operator`, or `broker` where no key is listed).
 */
export function admit(cmd: FleetCommand, robot: string, trust: FleetTrust, anonymity: Anonymity): Admission {
  const verdict = verifyCommand(cmd as unknown as Record<string, unknown>, robot, trust.keys);
  if (verdict.signed && !verdict.ok) return { ok: false, reason: `bad signature: ${verdict.reason}` };
  if (verdict.signed) return { ok: true, sender: 'operator', key: verdict.key };
  const sender: Sender = anonymity === 'closed' && trust.keys.length === 0 ? 'broker' : 'anyone';
  if (cmd.command === 'estop') return { ok: true, sender };
  if (anonymity !== 'closed' && anonymity !== 'unknown' && !trust.acceptAnonymousBroker) return { ok: false, reason: ANONYMOUS };
  if (cmd.command === 'release' && sender === 'anyone')
    return {
      ok: false,
      reason:
        trust.keys.length > 0
          ? "a release needs the operator's signed command (a key of fleet.operator_keys; cortexd fleet signs with CORTEX_FLEET_OPERATOR_KEY)"
          : "a release needs the operator's identity: a broker that requires credentials, or a command signed with a key of fleet.operator_keys",
    };
  return { ok: true, sender };
}
