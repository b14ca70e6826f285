// How `cortexd run` loads its configuration with --om1 and --simulate: the first lines say what was translated and simulated.
import type { LoadedConfig } from '../src/config/schema.js';
import { errLine } from './output.js';

export interface RunLoadOptions {
  config?: string;
  /** `--om1 [file]`: read an OM1 file (true: the name or --config given). */
  om1?: string | boolean;
  /** `--simulate`: simulated bindings for every device, the embedded service for every address. */
  simulate?: boolean;
  /** `--record FILE`: set here when an OM1 file asks for its tracer. */
  record?: string;
}

/**
 * Loads the configuration to run. With --simulate the first lines (`print`: stderr, or the log under the journal) say that the run is a
 * simulation and what each device became; with --om1 they say each translation. Serial ports a
 * simulated configuration opens are made as serialport mock ports before anything starts.
 */
export async function loadForRun(name: string | undefined, opts: RunLoadOptions, print: (line: string) => void = errLine): Promise<LoadedConfig> {
  const { loadAs } = await import('../src/compat/om1/load.js');
  const file = typeof opts.om1 === 'string' ? opts.om1 : opts.config;
  const banner = (why: string) =>
    print(`cortexd: SIMULATION (${why}): every device is simulated and every service address is the embedded service; no robot is moved`);
  if (opts.simulate) banner('--simulate');
  const { loaded, om1, simulated, simulate, tracer } = await loadAs(file ? { file } : { name }, {
    om1: opts.om1 !== undefined && opts.om1 !== false,
    simulate: opts.simulate === true,
  });
  // An OM1 file's use_sim: true simulates as --simulate does; said first, as --simulate is.
  if (simulate && !opts.simulate) {
    banner("the OM1 file's use_sim: true");
    opts.simulate = true;
  }
  if (om1) print(`cortexd: read as an OM1 file: ${om1.translations.length} translation${om1.translations.length === 1 ? '' : 's'}`);
  for (const line of om1?.translations ?? []) print(`om1: ${line}`);
  for (const w of om1?.warnings ?? []) print(`cortexd: warning: ${w}`);
  for (const line of simulated ?? []) print(`simulate: ${line}`);
  for (const line of loaded.notes ?? []) print(line);
  // OM1's use_tracer: the run is recorded (as --record does) under the state directory's traces/, unless --record names a file.
  if (tracer && !opts.record) {
    const [{ stateDir }, { join }, { mkdirSync }] = await Promise.all([import('../src/paths.js'), import('node:path'), import('node:fs')]);
    const dir = join(stateDir(), 'traces');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    opts.record = join(dir, `${loaded.configName}-${new Date().toISOString().slice(0, 10)}.mcap`);
    print(`cortexd: use_tracer: recording this run to ${opts.record}`);
  }
  if (opts.simulate) {
    const { mockSerialPaths, simulatedControllerPaths, simulatedGpsPaths } = await import('../src/config/simulate.js');
    const users = loaded.config as Parameters<typeof mockSerialPaths>[0];
    const paths = mockSerialPaths(users);
    if (paths.length > 0) {
      const { SerialPortMock } = await import('serialport');
      for (const path of paths) {
        try {
          SerialPortMock.binding.createPort(path);
        } catch {
          // made already (a second run in this process)
        }
      }
      // The motor controller of the serial protocol, simulated: `OK` to each command, so moves and faces succeed.
      const { simulateControllers } = await import('../devices/serial-sim-controller.js');
      simulateControllers(simulatedControllerPaths(users));
      // A GPS receiver, simulated: a fix standing still, in NMEA once a second.
      const { simulateGpsReceivers } = await import('../devices/serial-sim-gps.js');
      simulateGpsReceivers(simulatedGpsPaths(users));
    }
  }
  return loaded;
}
