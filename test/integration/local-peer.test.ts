// The owner of a loopback connection, read from the kernel's socket table, over IPv4 and IPv6 on port 0; a remote-looking address keys on itself.
import t from 'tap';
import { createServer, connect, type Socket } from 'node:net';
import { isLoopbackAddress, peerKeyOf, plainAddress } from '../../src/local-peer.js';

/** Resolves with the key the server gave the one connection a client made to `host`. */
async function keyOver(host: string): Promise<string | undefined> {
  const server = createServer();
  const keyed = new Promise<string>((resolve) => server.once('connection', (s: Socket) => void peerKeyOf(s).then(resolve)));
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, host, () => resolve(true));
  });
  if (!listening) return undefined;
  const port = (server.address() as { port: number }).port;
  const client = connect(port, host);
  try {
    return await keyed;
  } finally {
    client.destroy();
    server.close();
  }
}

t.test(
  'a connection from this machine is keyed on the user that owns it, over 127.0.0.1 and ::1',
  { skip: process.platform !== 'linux' && 'Linux only' },
  async (t) => {
    t.equal(await keyOver('127.0.0.1'), `uid:${process.getuid!()}`, 'IPv4 loopback: this process user');
    const v6 = await keyOver('::1');
    if (v6 === undefined) t.comment('no IPv6 loopback on this machine');
    else t.equal(v6, `uid:${process.getuid!()}`, 'IPv6 loopback: this process user');
    const other = await keyOver('127.0.0.2');
    t.equal(other, `uid:${process.getuid!()}`, 'another address of 127/8: the same user');
  },
);

t.test('addresses: all of 127/8, ::1 and v4-mapped loopback are loopback; others are not', async (t) => {
  for (const a of ['127.0.0.1', '127.9.8.7', '::1', '::ffff:127.0.0.1']) t.ok(isLoopbackAddress(a), a);
  for (const a of ['10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', 'fe80::1']) t.notOk(isLoopbackAddress(a), a);
  t.equal(plainAddress('::ffff:192.168.1.5'), '192.168.1.5');
});
