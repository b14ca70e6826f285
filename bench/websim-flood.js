// Agent memory and e-stop socket latency through a WebSim typing flood with pages that never read (issue 23); prints JSON and a summary line.
import { existsSync } from 'node:fs';
import { MAIN } from './lib/agent.js';
import { websimFlood } from './lib/websim-flood.js';
import { finish, option, quick, verdict } from './lib/bench.js';

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run npm run build first`);
  process.exit(2);
}
const { metrics, targetsMissed } = await websimFlood({
  seconds: option('seconds', 40, 2),
  rateHz: option('rate', 10),
  lineLength: option('length', 2000),
  silentPages: option('pages', 600, 20),
  idleSeconds: quick ? 1 : undefined,
});
console.log(JSON.stringify({ bench: 'websim-flood', ...metrics, targets_missed: targetsMissed }, null, 2));
const r = metrics.rss_mb;
const e = metrics.estop_socket_ms;
const line = `websim-flood: ${metrics.lines_sent} lines of ${metrics.line_length} chars in ${metrics.flood_seconds} s + ${metrics.silent_pages} silent pages: RSS ${r.idle_baseline} -> peak ${r.peak} MB (target < ${r.target_peak}); speech queue max ${metrics.speech_queue.max_waiting}, ${metrics.speech_queue.overflowed} dropped; e-stop socket p99 ${e.idle.p99} ms idle, ${e.flood.p99} ms flooded (target < ${e.target_p99})`;
verdict(line, targetsMissed);
await finish(targetsMissed.length ? 1 : 0);
