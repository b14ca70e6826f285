// Benchmark: the agent under a WebSim typing flood and a fleet command flood (issue 23), one after the other, each against its own idle baseline: memory, e-stop socket latency, tick lateness.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { MAIN } from './lib/agent.js';
import { fleetFlood } from './lib/fleet-flood.js';
import { websimFlood } from './lib/websim-flood.js';
import { finish, option, quick, verdict } from './lib/bench.js';

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run npm run build first`);
  process.exit(2);
}
const load = [loadavg()[0]];
const websim = await websimFlood({
  seconds: option('seconds', 40, 2),
  rateHz: option('rate', 10),
  lineLength: option('length', 2000),
  silentPages: option('pages', 600, 20),
  idleSeconds: quick ? 1 : undefined,
});
load.push(loadavg()[0]);
const fleet = await fleetFlood({ commands: option('commands', 10_000, 200), hertz: 10, targetP99Ms: 50, baselineMs: quick ? 1000 : undefined });
load.push(loadavg()[0]);
const missed = [...websim.targetsMissed.map((m) => `websim: ${m}`), ...fleet.targetsMissed.map((m) => `fleet: ${m}`)];
console.log(JSON.stringify({ bench: 'agent-abuse', load, websim: websim.metrics, fleet: fleet.metrics, targets_missed: missed }, null, 2));
const w = websim.metrics;
const f = fleet.metrics;
const line =
  `agent-abuse: WebSim flood RSS ${w.rss_mb.idle_baseline} -> peak ${w.rss_mb.peak} MB (target < ${w.rss_mb.target_peak}), e-stop p99 ${w.estop_socket_ms.idle.p99} -> ${w.estop_socket_ms.flood.p99} ms; ` +
  `fleet flood of ${f.commands}: e-stop p99 ${f.estop_socket_ms.idle.p99} -> ${f.estop_socket_ms.flood.p99} ms, tick lateness p99 ${f.tick_lateness_ms.idle.p99} -> ${f.tick_lateness_ms.flood.p99} ms, fleet estop latched ${f.fleet_estop.latched_ms_after_last_publish} ms after the last publish, RSS peak ${f.rss_mb.peak} MB (target e-stop p99 < 50 ms)`;
verdict(line, missed);
await finish(0);
