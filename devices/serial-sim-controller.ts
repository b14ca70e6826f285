// The simulated motor controller of `--simulate`: on the mock ports of `serial` connectors it answers each command line as a real board does (`OK`).
import { SerialPortMock } from 'serialport';

/** What a board of the serial line protocol (README, "Serial line protocol") acknowledges; `STOP` is never answered. */
const COMMAND = /^(MOVE|FACE)\b/;

interface MockPort {
  isOpen: boolean;
  write(buffer: Buffer): Promise<void>;
  emitData(data: string | Buffer): void;
}

type MockBinding = typeof SerialPortMock.binding & { [ANSWERING]?: Set<string> };
const ANSWERING = Symbol.for('cortexd.simulatedController');

/** Makes the port answer: every complete `MOVE ...`/`FACE ...` line written gets `OK\n` back on the next turn. */
function answer(port: MockPort): void {
  const write = port.write.bind(port);
  let pending = '';
  port.write = async (buffer: Buffer) => {
    await write(buffer);
    pending += buffer.toString('utf8');
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).replace(/\r$/, '');
      pending = pending.slice(nl + 1);
      if (COMMAND.test(line))
        setImmediate(() => {
          if (port.isOpen) port.emitData('OK\n');
        });
    }
    if (pending.length > 4096) pending = '';
  };
}

/**
 * Every mock port at `paths` opened from now on (in this process) answers as a motor controller. The
 * mock binding is the process's own (serialport's), so the paths are kept on it: a second call adds
 * paths, it does not wrap `open` twice.
 */
export function simulateControllers(paths: readonly string[]): void {
  const binding = SerialPortMock.binding as MockBinding;
  const known = binding[ANSWERING];
  if (known) {
    for (const p of paths) known.add(p);
    return;
  }
  const answering = new Set(paths);
  binding[ANSWERING] = answering;
  const open = binding.open.bind(binding);
  binding.open = async (options) => {
    const port = await open(options);
    if (answering.has(options.path)) answer(port as unknown as MockPort);
    return port;
  };
}
