// Benchmark: 10,000 fleet `say` commands against a real agent on a real mosquitto: e-stop socket p99 during the flood against the idle baseline, tick lateness, the estop sent behind the flood, RSS.
import { loadavg } from 'node:os';
import { finish, option, quick, verdict } from './lib/bench.js';
import { fleetFlood } from './lib/fleet-flood.js';

const { metrics, targetsMissed } = await fleetFlood({
  commands: option('commands', 10_000, 200),
  hertz: option('hertz', 10),
  targetP99Ms: 50,
  baselineMs: quick ? 1000 : undefined,
});
console.log(JSON.stringify({ bench: 'fleet-flood', load: loadavg()[0], ...metrics, targets_missed: targetsMissed }, null, 2));
const m = metrics;
const summary =
  `fleet flood of ${m.commands} says: e-stop socket p99 ${m.estop_socket_ms.flood.p99} ms (idle ${m.estop_socket_ms.idle.p99} ms), ` +
  `tick lateness p99 ${m.tick_lateness_ms.flood.p99} ms (idle ${m.tick_lateness_ms.idle.p99} ms), fleet estop latched ${m.fleet_estop.latched_ms_after_last_publish} ms after the last publish (reply ${m.fleet_estop.reply_ms} ms) ` +
  `with ${m.fleet_estop.say_replies_after_it} says answered after it, RSS peak ${m.rss_mb.peak} MB (idle ${m.rss_mb.idle} MB)`;
verdict(summary, targetsMissed);
await finish(0);
