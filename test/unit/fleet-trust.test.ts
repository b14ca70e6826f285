// The operator's signature and the robot's trust: what a signed, an unsigned and a forged command may do on an open and a closed broker; which reloads relax safety.
import t from 'tap';
import { generateOperatorKey, parsePrivateKey, parsePublicKey, signCommand, verifyCommand } from '../../src/fleet/identity.js';
import { makeCommand, type FleetCommand } from '../../src/fleet/protocol.js';
import { admit, type FleetTrust } from '../../src/fleet/trust.js';
import { safetyRelaxations } from '../../src/safety/relaxes.js';

const op = generateOperatorKey();
const other = generateOperatorKey();
const priv = parsePrivateKey(op.privatePem);
const trust: FleetTrust = { keys: [parsePublicKey(op.publicKey)], acceptAnonymousBroker: false };
const noKeys: FleetTrust = { keys: [], acceptAnonymousBroker: false };
const cmd = (body: Parameters<typeof makeCommand>[0]) => makeCommand(body, 60_000);

t.test('a signature verifies for its robot only, and not once any field changes', async (t) => {
  const signed = signCommand(cmd({ command: 'release' }), 'r1', priv);
  t.match(verifyCommand(signed, 'r1', trust.keys), { signed: true, ok: true });
  t.match(verifyCommand(signed, 'r2', trust.keys), { signed: true, ok: false });
  t.match(verifyCommand({ ...signed, expires_at: signed.expires_at + 1 }, 'r1', trust.keys), { signed: true, ok: false });
  t.match(verifyCommand(signed, 'r1', [parsePublicKey(other.publicKey)]), { signed: true, ok: false, reason: /matches none/ });
  t.match(verifyCommand(signed, 'r1', []), { signed: true, ok: false, reason: /lists no operator key/ });
  t.match(verifyCommand({ ...signed, sig: 'x' }, 'r1', trust.keys), { ok: false, reason: /not an Ed25519 signature/ });
  t.same(verifyCommand(cmd({ command: 'release' }), 'r1', trust.keys), { signed: false });
});

t.test('bad keys are refused with what a key looks like', async (t) => {
  t.throws(() => parsePublicKey('ssh-ed25519 AAAA'), /"ed25519:" followed by 43 base64url characters/);
  t.throws(() => parsePrivateKey('not a pem'), /not a private key in PEM form/);
});

t.test('admission on an open broker: estop always; everything else unsigned refused; signed passes', async (t) => {
  const open = (c: FleetCommand, tr = trust) => admit(c, 'r1', tr, 'open');
  t.match(open(cmd({ command: 'estop' })), { ok: true });
  for (const c of [cmd({ command: 'release' }), cmd({ command: 'switch', mode: 'x' }), cmd({ command: 'say', text: 'hi' })])
    t.match(open(c), { ok: false, reason: /lets in clients without credentials/ }, c.command);
  t.match(open(signCommand(cmd({ command: 'release' }), 'r1', priv)), { ok: true, sender: 'operator' });
  t.match(open(signCommand(cmd({ command: 'release' }), 'r1', parsePrivateKey(other.privatePem))), { ok: false, reason: /^bad signature/ });
  const accepting = { ...trust, acceptAnonymousBroker: true };
  t.match(open(cmd({ command: 'switch', mode: 'x' }), accepting), { ok: true, sender: 'anyone' });
  t.match(open(cmd({ command: 'release' }), accepting), { ok: false, reason: /a release needs the operator's signed command/ });
});

t.test('admission on a closed broker: the broker is the identity only where the robot lists no key', async (t) => {
  t.match(admit(cmd({ command: 'release' }), 'r1', noKeys, 'closed'), { ok: true, sender: 'broker' });
  t.match(admit(cmd({ command: 'release' }), 'r1', trust, 'closed'), { ok: false, reason: /signed command/ });
  t.match(admit(cmd({ command: 'switch', mode: 'x' }), 'r1', trust, 'closed'), { ok: true, sender: 'anyone' });
  t.match(admit(cmd({ command: 'release' }), 'r1', noKeys, 'unknown'), { ok: false }, 'an unanswered probe is no identity');
});

t.test('safetyRelaxations names each loosened limit, and nothing for a tighter policy', async (t) => {
  const base = { modes: { idle: {}, walk: { safety: { motion: false } } }, safety: { deadman_seconds: 3, estop_socket: { enabled: true } } } as never;
  t.same(safetyRelaxations(base, base), []);
  const tighter = { modes: { idle: {}, walk: { safety: { motion: false } } }, safety: { deadman_seconds: 1, estop_socket: { enabled: true } } } as never;
  t.same(safetyRelaxations(base, tighter), []);
  const looser = {
    modes: { idle: {}, walk: { safety: { motion: true } } },
    safety: { deadman_seconds: 3600, rate_limit: { commands: 100, per_seconds: 1 }, stop_on_service_loss: false, estop_socket: { enabled: false } },
  } as never;
  t.same(safetyRelaxations(base, looser).sort(), [
    'modes.walk.safety: motion allowed where it was forbidden',
    'safety.estop_socket turned off',
    'safety: deadman_seconds 3 s -> 3600 s',
    'safety: rate limit 4 per 1 s -> 100 per 1 s',
    'safety: stop_on_service_loss turned off',
  ]);
});
