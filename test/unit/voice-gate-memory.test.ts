// The voice detector's WebAssembly memory (16 MB) is held only while a detector is open: after the last one closes it is collected, so a mode that listened leaves nothing behind.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const BUILT = join(import.meta.dirname, '..', '..', 'dist', 'src', 'pipelines', 'voice-gate.js');

t.test(
  'two detectors share one module; closing the last frees its memory; a new one loads it again',
  { skip: !existsSync(BUILT) && 'run `npm run build` first' },
  async (t) => {
    // In a process of its own, with gc exposed, so external memory is measured after a full collection.
    const script = `
    const { loadVoiceDetector } = await import(${JSON.stringify(BUILT)});
    const ext = async () => { for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 20)); } return process.memoryUsage().external / 1048576; };
    const before = await ext();
    const a = await loadVoiceDetector(16000);
    const b = await loadVoiceDetector(16000);
    const open = await ext();
    a.close();
    const oneOpen = await ext();
    b.close();
    const closed = await ext();
    const c = await loadVoiceDetector(16000);
    const speech = c.isSpeech(new Int16Array(c.frameSamples));
    c.close();
    console.log(JSON.stringify({ before, open, oneOpen, closed, speech }));
  `;
    const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<
      string,
      number | boolean
    >;
    const mb = (k: string) => out[k] as number;
    t.ok(
      mb('open') - mb('before') > 12 && mb('open') - mb('before') < 24,
      `two open detectors hold one module's memory: +${(mb('open') - mb('before')).toFixed(1)} MB`,
    );
    t.ok(mb('oneOpen') - mb('before') > 12, `one still open keeps it: +${(mb('oneOpen') - mb('before')).toFixed(1)} MB`);
    t.ok(mb('closed') - mb('before') < 4, `all closed: +${(mb('closed') - mb('before')).toFixed(1)} MB`);
    t.equal(out.speech, false, 'a detector made after that works (silence is not speech)');
  },
);
