// Runs a simulated device on each serialport mock port opened at the paths it was given: one hook on the mock binding's open, one set of paths per device kind.
import { SerialPortMock } from 'serialport';

/** What a simulated device sees of an open mock port (serialport's MockPortBinding). */
export interface MockPort {
  isOpen: boolean;
  write(buffer: Buffer): Promise<void>;
  emitData(data: string | Buffer): void;
  close(): Promise<void>;
}

type Attach = (port: MockPort) => void;
type MockBinding = typeof SerialPortMock.binding & { [HOOKS]?: Map<string, { paths: Set<string>; attach: Attach }> };
const HOOKS = Symbol.for('cortexd.simulatedSerialDevices');

/**
 * From now on (in this process), every mock port opened at one of `paths` gets `attach` called on it,
 * for the device `kind`. The mock binding is the process's own (serialport's): its `open` is wrapped
 * once; a later call for a kind adds paths to it.
 */
export function onMockPortOpen(kind: string, paths: readonly string[], attach: Attach): void {
  const binding = SerialPortMock.binding as MockBinding;
  let hooks = binding[HOOKS];
  if (!hooks) {
    const registered = new Map<string, { paths: Set<string>; attach: Attach }>();
    hooks = registered;
    binding[HOOKS] = registered;
    const open = binding.open.bind(binding);
    binding.open = async (options) => {
      const port = await open(options);
      for (const hook of registered.values()) if (hook.paths.has(options.path)) hook.attach(port as unknown as MockPort);
      return port;
    };
  }
  const hook = hooks.get(kind);
  if (hook) for (const p of paths) hook.paths.add(p);
  else hooks.set(kind, { paths: new Set(paths), attach });
}
