// The options of `cortexd run` as commander hands them to runAgent (durations already in milliseconds).

export interface RunOptions {
  config?: string;
  /** Milliseconds (commander parses `--for` with parseDuration). */
  for?: number;
  /** Start in the default mode, not the one mode memory saved. */
  fresh?: boolean;
  events?: boolean;
  inspect?: string | boolean;
  /** Reload the configuration file when it is saved (checked like a fleet reload; a file another user can write is treated as pushed). */
  watch?: boolean;
  /** `--record FILE.mcap` and its limits. */
  record?: string;
  recordRotateMb?: number;
  recordKeep?: number;
  recordFps?: number;
  /** `--foxglove [PORT]`: true for the default port. */
  foxglove?: number | true;
  /** `--om1 [file]` and `--simulate` (cli/run-load.ts). */
  om1?: string | boolean;
  simulate?: boolean;
}
