// How `cortexd run` loads its configuration with --om1 and --simulate: the first lines say what was translated and simulated.
import type { LoadedConfig } from '../config/schema.js';
import { errLine } from './output.js';

export interface RunLoadOptions {
  config?: string;
  /** `--om1 [file]`: read an OM1 file (true: the name or --config given). */
  om1?: string | boolean;
  /** `--simulate`: simulated bindings for every device, the embedded service for every address. */
  simulate?: boolean;
}

/**
 * Loads the configuration to run. With --simulate the first lines on stderr say that the run is a
 * simulation and what each device became; with --om1 they say each translation. Serial ports a
 * simulated configuration opens are made as serialport mock ports before anything starts.
 */
export async function loadForRun(name: string | undefined, opts: RunLoadOptions, events: boolean): Promise<LoadedConfig> {
  const { loadAs } = await import('../compat/om1/load.js');
  const file = typeof opts.om1 === 'string' ? opts.om1 : opts.config;
  void events;
  const print = errLine;
  if (opts.simulate) print('cortexd: SIMULATION (--simulate): every device is simulated and every service address is the embedded service; no robot is moved');
  const { loaded, om1, simulated } = await loadAs(file ? { file } : { name }, {
    om1: opts.om1 !== undefined && opts.om1 !== false,
    simulate: opts.simulate === true,
  });
  if (om1) print(`cortexd: read as an OM1 file: ${om1.translations.length} translation${om1.translations.length === 1 ? '' : 's'}`);
  for (const line of om1?.translations ?? []) print(`om1: ${line}`);
  for (const line of simulated ?? []) print(`simulate: ${line}`);
  if (opts.simulate) {
    const { mockSerialPaths } = await import('../config/simulate.js');
    const paths = mockSerialPaths(loaded.config as Parameters<typeof mockSerialPaths>[0]);
    if (paths.length > 0) {
      const { SerialPortMock } = await import('serialport');
      for (const path of paths) {
        try {
          SerialPortMock.binding.createPort(path);
        } catch {
          // made already (a second run in this process)
        }
      }
    }
  }
  return loaded;
}
