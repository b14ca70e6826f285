// HIL: OM1 files whose GPS and RTK backgrounds read real serial peers (gpsd's fake-pty feeder, a socat pty); OM1's context-aware rules fire on what they publish.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { until } from '../helpers/wait.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const MAIN = join(projectRoot(), 'dist', 'cli', 'main.js');
if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
const dir = mkdtempSync(join(tmpdir(), 'hil-om1-bg-'));

const stop = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : (p.once('exit', () => r()), p.kill())));

/**
 * An OM1 multi-mode file: a GPS-like background on `port`, a context-aware rule on gps_fix (as OM1
 * writes them), and with `withInput` the same sensor as a prompt input (which then carries the background).
 */
function om1File(name: string, background: 'Gps' | 'Rtk', port: string, withInput: boolean): string {
  const file = join(dir, `${name}.json5`);
  const mode = (display: string) => ({
    display_name: display,
    description: display,
    system_prompt_base: 'You are a rover.',
    hertz: 1,
    agent_inputs: withInput ? [{ type: background }] : [],
    action_execution_mode: 'concurrent',
    agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'ros2' }],
  });
  writeFileSync(
    file,
    JSON.stringify({
      version: 'v1.0.5',
      name,
      default_mode: 'searching',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: 'openmind_free',
      system_governance: 'Be safe.',
      cortex_llm: { type: 'OpenAILLM', config: { agent_name: 'Rover', history_length: 0 } },
      backgrounds: [{ type: background, config: { serial_port: port } }],
      modes: { searching: mode('Searching'), located: mode('Located') },
      transition_rules: [{ from_mode: 'searching', to_mode: 'located', transition_type: 'context_aware', context_conditions: { gps_fix: true }, priority: 1 }],
    }),
  );
  return file;
}

/** Runs `cortexd run --om1 FILE --events` (the model and sockets on the embedded service) and collects its events. */
function runAgent(file: string) {
  const events: Array<Record<string, unknown>> = [];
  let stderr = '';
  const child = spawn(process.execPath, [MAIN, 'run', '--om1', file, '--events', '--fresh'], {
    env: {
      ...process.env,
      CORTEX_STATE_DIR: mkdtempSync(join(dir, 'state-')),
      CORTEX_BASE_URL: 'embedded',
      CORTEX_WS_BASE_URL: 'embedded',
      CORTEX_ASR_WS_URL: 'embedded',
      CORTEX_VLM_WS_URL: 'embedded',
      CORTEX_LOG_LEVEL: 'warn',
      NOTIFY_SOCKET: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buf = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    buf += c;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        events.push(JSON.parse(line));
      } catch {
        // not an event
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return { child, events, stderr: () => stderr };
}

t.test("the Gps background on gpsd's fake-pty feeder: OM1's rule on gps_fix switches the mode", async (t) => {
  const log = join(dir, 'track.log');
  writeFileSync(
    log,
    ['$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47', '$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A', ''].join(
      '\r\n',
    ),
  );
  const feeder = join(dir, 'feed.py');
  writeFileSync(
    feeder,
    [
      'import sys, time, gps.fake',
      'p = gps.fake.FakePTY(gps.fake.TestLoad(open(sys.argv[1], "rb")), speed=9600)',
      'print(p.byname, flush=True)',
      'while True:',
      '    p.feed()',
      '    time.sleep(0.05)',
    ].join('\n'),
  );
  const py = spawn('/usr/bin/python3', [feeder, log], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => stop(py));
  let out = '';
  py.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const pty = await until("the feeder's pty", () => out.split('\n')[0]?.startsWith('/dev/') && out.split('\n')[0]);
  const agent = runAgent(om1File('gps_rover', 'Gps', pty, true));
  t.teardown(() => stop(agent.child));
  const switched = await until(`mode.changed to located (stderr: ${agent.stderr().slice(-800)})`, () =>
    agent.events.find((e) => e.type === 'mode.changed' && e.to === 'located'),
  );
  t.match(switched, { from: 'searching', to: 'located', trigger: 'context_aware' });
  t.ok(
    agent.events.some((e) => e.type === 'context' && JSON.stringify(e).includes('"gps_fix":true')),
    'the GPS background published gps_fix',
  );
  t.match(agent.stderr(), /om1: backgrounds\[0\]\.type: Gps \(background\) -> carried by this mode's GpsInput/);
});

t.test('the Rtk background alone on a socat pty (RTK fixed, quality 4): its supervised actor publishes, the same rule fires', async (t) => {
  const ours = join(dir, 'rtk');
  const peer = join(dir, 'rtk-peer');
  const socat = spawn('socat', [`pty,raw,echo=0,link=${ours}`, `pty,raw,echo=0,link=${peer}`], { stdio: 'ignore' });
  t.teardown(() => stop(socat));
  await until('pty links', () => existsSync(ours) && existsSync(peer), 10_000);
  const agent = runAgent(om1File('rtk_rover', 'Rtk', ours, false));
  t.teardown(() => stop(agent.child));
  // Keep writing until the agent's reader has the port open and the rule fired.
  const gga = '$GPGGA,123519,4807.038,N,01131.000,E,4,12,0.5,545.4,M,46.9,M,1.0,0000*';
  const sum = [...gga.slice(1, -1)].reduce((a, c) => a ^ c.charCodeAt(0), 0);
  const line = `${gga}${sum.toString(16).toUpperCase().padStart(2, '0')}\r\n`;
  const writer = setInterval(() => {
    try {
      const fd = openSync(peer, 'w');
      writeSync(fd, line);
      closeSync(fd);
    } catch {
      // the peer end is reopened on the next beat
    }
  }, 200);
  t.teardown(() => clearInterval(writer));
  const switched = await until(`mode.changed to located (stderr: ${agent.stderr().slice(-800)})`, () =>
    agent.events.find((e) => e.type === 'mode.changed' && e.to === 'located'),
  );
  t.match(switched, { from: 'searching', to: 'located' });
  t.match(agent.stderr(), /om1: backgrounds\[0\]\.type: Rtk \(background\) -> GpsInput/);
  t.ok(
    agent.events.some((e) => e.type === 'background' && e.background === 'GpsInput' && e.state === 'running' && e.mode === 'searching'),
    'the background is an actor of its own, its health on the bus',
  );
  t.ok(
    agent.events.some((e) => e.type === 'context' && e.source === 'background.GpsInput' && JSON.stringify(e).includes('"gps_fix":true')),
    'the fix came from the background, not from a prompt input',
  );
  t.notOk(
    agent.events.some((e) => e.type === 'input' && e.input === 'GpsInput'),
    'a background is no prompt input',
  );
});
