// The simulated motor controller of `--simulate`: on the mock ports of `serial` connectors it answers each command line as a real board does (`OK`).
import { type MockPort, onMockPortOpen } from './serial-mock-open.js';

/** What a board of the serial line protocol (README, "Serial line protocol") acknowledges; `STOP` is never answered. */
const COMMAND = /^(MOVE|FACE)\b/;

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

/** Every mock port at `paths` opened from now on (in this process) answers as a motor controller. */
export function simulateControllers(paths: readonly string[]): void {
  onMockPortOpen('motor controller', paths, answer);
}
