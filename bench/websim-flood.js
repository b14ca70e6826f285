// Agent memory and e-stop socket latency through a WebSim typing flood with pages that never read (issue 23); prints JSON and a summary line.
import { existsSync } from 'node:fs';
import { MAIN } from './lib/agent.js';
import { websimFlood } from './lib/websim-flood.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run npm run build first`);
  process.exit(2);
}
const { metrics, targetsMissed } = await websimFlood({
  seconds: arg('seconds', 40),
  rateHz: arg('rate', 10),
  lineLength: arg('length', 2000),
  silentPages: arg('pages', 600),
});
console.log(JSON.stringify({ bench: 'websim-flood', ...metrics, targets_missed: targetsMissed }, null, 2));
const r = metrics.rss_mb;
const e = metrics.estop_socket_ms;
const line = `websim-flood: ${metrics.lines_sent} lines of ${metrics.line_length} chars in ${metrics.flood_seconds} s + ${metrics.silent_pages} silent pages: RSS ${r.idle_baseline} -> peak ${r.peak} MB (target < ${r.target_peak}); speech queue max ${metrics.speech_queue.max_waiting}, ${metrics.speech_queue.overflowed} dropped; e-stop socket p99 ${e.idle.p99} ms idle, ${e.flood.p99} ms flooded (target < ${e.target_p99})`;
console.log(targetsMissed.length ? `${line}; MISSED target: ${targetsMissed.join('; ')}` : `${line}; within target`);
process.exit(targetsMissed.length ? 1 : 0);
