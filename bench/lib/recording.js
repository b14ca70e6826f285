// Spoken test recordings made on the spot with espeak-ng and sox (16 kHz mono s16le), and where their speech starts.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `text` spoken at 160 words per minute with `before` and `after` seconds of silence (or `pieces`:
 * a list of [text, silence after] for several utterances). Returns the PCM (no header) and, per
 * utterance, the sample where its speech starts (first 10 ms window above RMS 300).
 */
export function makeRecording(dir, name, { text, before = 1, after = 1, pieces } = {}) {
  const parts = pieces ?? [[text, after]];
  const files = [];
  parts.forEach(([words, silence], i) => {
    const raw = join(dir, `${name}-${i}-raw.wav`);
    const padded = join(dir, `${name}-${i}.wav`);
    execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', raw, words]);
    execFileSync('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', padded, 'pad', String(i === 0 ? before : 0), String(silence)]);
    files.push(padded);
  });
  const wav = join(dir, `${name}.wav`);
  if (files.length === 1) execFileSync('cp', [files[0], wav]);
  else execFileSync('sox', [...files, wav]);
  const pcm = pcmOf(readFileSync(wav));
  return { wav, pcm, onsets: onsets(pcm) };
}

/** The data chunk of a 16-bit mono WAV. */
export function pcmOf(buf) {
  let off = 12;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    if (id === 'data') return buf.subarray(off + 8, off + 8 + Math.min(size, buf.length - off - 8));
    off += 8 + size + (size % 2);
  }
  throw new Error('WAV without data');
}

/** Sample indexes where speech starts after at least 300 ms of quiet (10 ms windows, RMS 300). */
export function onsets(pcm) {
  const win = 160;
  const out = [];
  let quiet = 30;
  for (let i = 0; i + win * 2 <= pcm.length; i += win * 2) {
    let sum = 0;
    for (let j = 0; j < win; j++) sum += pcm.readInt16LE(i + j * 2) ** 2;
    const loud = Math.sqrt(sum / win) > 300;
    if (loud && quiet >= 30) out.push(i / 2);
    quiet = loud ? 0 : quiet + 1;
  }
  return out;
}
