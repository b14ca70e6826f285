// Benchmark: resident memory of the default agent over time (5 minutes by default) while it is talked to, against an idle bare node process.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finish, option, quick, spawn, verdict } from './lib/bench.js';

const SECONDS = option('seconds', 300, 4);
const SAMPLE_MS = quick ? 500 : 5000;
const TARGET_MB = 150;
const main = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const rssMb = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

const env = { ...process.env, CORTEX_STATE_DIR: mkdtempSync(join(tmpdir(), 'cortexd-mem-')), CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '' };
const agent = spawn(process.execPath, [main, 'run', 'default', '--events', '--for', `${SECONDS + 5}s`], { env, stdio: ['pipe', 'ignore', 'ignore'] });
const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
const lines = ['hello', 'what is your name', 'how are you', 'dance for me', 'thank you', 'go to sleep', 'wake up pip', 'hi there'];
let n = 0;
const talk = setInterval(() => agent.stdin.write(`${lines[n++ % lines.length]}\n`), quick ? 500 : 2000);

const samples = [];
const t0 = Date.now();
await new Promise((resolve) => {
  const sample = setInterval(() => {
    samples.push({ t_s: Math.round((Date.now() - t0) / 1000), agent_mb: +rssMb(agent.pid).toFixed(1), bare_mb: +rssMb(bare.pid).toFixed(1) });
    if (Date.now() - t0 >= SECONDS * 1000) {
      clearInterval(sample);
      resolve();
    }
  }, SAMPLE_MS);
});
clearInterval(talk);
agent.kill('SIGTERM');
bare.kill('SIGKILL');

// After a one-minute warm-up (or the first third), compare the mean of the first and last quarter of the samples.
const steady = samples.slice(Math.min(12, Math.floor(samples.length / 3)));
const q = Math.max(1, Math.floor(steady.length / 4));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const early = mean(steady.slice(0, q).map((s) => s.agent_mb));
const late = mean(steady.slice(-q).map((s) => s.agent_mb));
const max = Math.max(...samples.map((s) => s.agent_mb));
console.log(
  JSON.stringify({ seconds: SECONDS, lines_typed: n, samples, max_rss_mb: max, steady_early_mb: +early.toFixed(1), steady_late_mb: +late.toFixed(1) }, null, 2),
);
verdict(
  `agent memory: max RSS ${max.toFixed(1)} MB over ${SECONDS}s (${n} lines typed), steady state ${early.toFixed(1)} -> ${late.toFixed(1)} MB; bare node ${samples.at(-1).bare_mb} MB`,
  max < TARGET_MB ? [] : [`max RSS ${max.toFixed(1)} MB >= ${TARGET_MB} MB`],
);
await finish(0);
