// HIL: a battery board on a socat pty feeds BatteryInput's serial binding as a background; `BAT 15` makes battery_low true and a context-aware rule switches the mode.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { until } from '../helpers/wait.js';

// A hang guard for the whole file on a loaded 2-core CI machine, not a timing assertion.
t.setTimeout(300_000);

const MAIN = join(projectRoot(), 'dist', 'cli', 'main.js');
if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
const dir = mkdtempSync(join(tmpdir(), 'hil-battery-'));

const stop = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : (p.once('exit', () => r()), p.kill())));

/** Two modes; the battery board is a background of `working`; `{battery_low: true}` sends the robot to `docking`. */
function configFile(port: string): string {
  const mode = (display: string) => ({
    display_name: display,
    description: display,
    system_prompt_base: 'You are a rover.',
    hertz: 1,
    agent_inputs: [],
    backgrounds: [{ type: 'BatteryInput', config: { binding: 'serial', serial_port: port, low_percent: 20 } }],
    agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
  });
  const file = join(dir, 'rover.json');
  writeFileSync(
    file,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'rover',
      default_mode: 'working',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: 'openmind_free',
      system_governance: 'Be safe.',
      service: { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
      modes: { working: mode('Working'), docking: mode('Docking') },
      transition_rules: [
        { from_mode: 'working', to_mode: 'docking', transition_type: 'context_aware', context_conditions: { battery_low: true }, priority: 1 },
      ],
    }),
  );
  return file;
}

t.test('a battery board on a socat pty: a garbage line is counted, BAT 15 switches the mode on battery_low', async (t) => {
  const ours = join(dir, 'bat');
  const peer = join(dir, 'bat-peer');
  const socat = spawn('socat', [`pty,raw,echo=0,link=${ours}`, `pty,raw,echo=0,link=${peer}`], { stdio: 'ignore' });
  t.teardown(() => stop(socat));
  await until('pty links', () => existsSync(ours) && existsSync(peer), 10_000);

  const events: Array<Record<string, unknown>> = [];
  let stderr = '';
  const child = spawn(process.execPath, [MAIN, 'run', '--config', configFile(ours), '--events', '--fresh'], {
    env: { ...process.env, CORTEX_STATE_DIR: mkdtempSync(join(dir, 'state-')), CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => stop(child));
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
  const context = (key: string, value: unknown) =>
    events.find((e) => e.type === 'context' && e.source === 'background.BatteryInput' && JSON.stringify(e).includes(`"${key}":${JSON.stringify(value)}`));

  // The board writes until the agent's reader has the port open (a pty drops what nobody reads).
  let line = 'BAT 78 CHG\n';
  let written = 0;
  const writer = setInterval(() => {
    try {
      const fd = openSync(peer, 'w');
      writeSync(fd, line);
      closeSync(fd);
      written += 1;
    } catch {
      // the peer end is reopened on the next beat
    }
  }, 200);
  t.teardown(() => clearInterval(writer));

  const charging = await until(
    () => `a charging reading (stderr: ${stderr.slice(-800)})`,
    () => context('battery_charging', true),
  );
  t.match(JSON.stringify(charging), /"battery_percent":78/);
  t.match(JSON.stringify(charging), /"battery_low":false/);
  t.notOk(
    events.some((e) => e.type === 'mode.changed'),
    'a charging battery switches nothing',
  );

  line = '#garbage from the board\u0007\n';
  await until(
    () => `the bad line logged (stderr: ${stderr.slice(-800)})`,
    () => /battery: .*not a battery reading.*further bad lines are only counted/.test(stderr),
  );
  // A few more garbage lines after the first was logged: they are counted, not logged again.
  const more = written + 3;
  await until('three more garbage lines written', () => written >= more);
  line = '{"percent":50,"charging":false}\n';
  await until('the JSON reading after the garbage', () => context('battery_percent', 50));
  t.equal(child.exitCode, null, 'the agent keeps running after bad lines');
  t.equal(stderr.match(/not a battery reading/g)?.length, 1, 'bad lines are logged once, then counted');

  line = 'BAT 15\n';
  const switched = await until(
    () => `mode.changed to docking (stderr: ${stderr.slice(-800)})`,
    () => events.find((e) => e.type === 'mode.changed' && e.to === 'docking'),
  );
  t.match(switched, { from: 'working', to: 'docking', trigger: 'context_aware' });
  t.ok(context('battery_low', true), 'BAT 15 published battery_low: true');
  t.ok(
    events.some((e) => e.type === 'background' && e.background === 'BatteryInput' && e.state === 'running'),
    'the board is read by its own background actor',
  );
});
