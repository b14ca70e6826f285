// Ctrl-C in a terminal signals the whole foreground process group: cortexd's own children (the warm espeak-ng) must survive it so the on_shutdown goodbye is still spoken.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, built } from '../helpers/agent-process.js';
import { defaultAgentDir } from '../helpers/default-agent.js';

t.setTimeout(120_000);

const wavs = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.wav'))
        .sort()
    : [];

t.test(
  'SIGINT to the process group, as a terminal sends it: the default agent says its goodbye and exits 0',
  { skip: !built && 'run `npm run build` first' },
  async (t) => {
    const d = await defaultAgentDir();
    const speech = join(d.state, 'speech');
    // Its own group, with it as the leader: kill(-pid) reaches it and every child that stayed in the group.
    const child = spawn(process.execPath, [MAIN, 'run', '--config', d.config, '--events', '--fresh'], {
      env: { ...process.env, CORTEX_STATE_DIR: d.state, CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    t.teardown(() => void (child.exitCode === null && process.kill(-child.pid!, 'SIGKILL')));
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Idle's on_entry message ("I'm resting now...") is spoken to a WAV file; once it is there, the warm synthesiser waits for the next sentence.
    const until = Date.now() + 60_000;
    while (wavs(speech).length === 0 || !/"type":"tick"/.test(out)) {
      if (Date.now() > until) t.fail(`no first speech and tick in 60 s: ${out.slice(-1500)}`);
      if (Date.now() > until || child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const before = wavs(speech).length;
    process.kill(-child.pid!, 'SIGINT');
    t.equal(await exited, 0, 'exit 0 after SIGINT');
    t.notMatch(out, /speech stream ended without audio|speak failed|hook of idle failed/, 'the goodbye did not fail');
    t.equal(wavs(speech).length, before + 1, 'the on_shutdown goodbye was spoken (one more WAV)');
  },
);
