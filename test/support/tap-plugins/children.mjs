// tap plugin: the node processes a test starts (agents, `cortexd` commands, services) do not load tap's process tracker.
// tap's @tapjs/processinfo puts itself into the NODE_OPTIONS of every child (through process-on-spawn), so each node child of a test loaded it
// (about 0.3 s of CPU and a loader thread) and wrote a record of itself; the records serve coverage, which this suite does not collect.
// This listener runs after processinfo's and takes it out again. A child that must load TypeScript is given the loader in its arguments.
import processOnSpawn from 'process-on-spawn';

/** NODE_OPTIONS without processinfo's --import (options are split on spaces outside quotes). */
const withoutTracker = (options) =>
  options
    .split(/\s+(?=(?:[^"]*"[^"]*")*[^"]*$)/)
    .filter((o) => o && !o.includes('@tapjs/processinfo'))
    .join(' ');

if (process.env.TAP_CHILD_ID !== undefined) {
  processOnSpawn.addListener((opts) => {
    const options = opts.env.NODE_OPTIONS;
    if (options?.includes('@tapjs/processinfo')) opts.env = { ...opts.env, NODE_OPTIONS: withoutTracker(options) };
  });
}

export const plugin = () => ({});
