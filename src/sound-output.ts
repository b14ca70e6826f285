// Whether this machine can play sound, asked without playing anything: an ALSA playback device, or a PulseAudio/PipeWire server to play through.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * True when an ALSA card has a playback device (`/proc/asound/pcm`) or a sound server's socket is
 * there (PULSE_SERVER, `$XDG_RUNTIME_DIR/pulse/native`, `pipewire-0`); false otherwise. The start of a
 * run says where speech goes from this, so it does not promise a speaker that the first sentence
 * then finds missing. A player that still fails (a card the service user may not open) falls back to
 * files and says so then.
 */
export function canPlaySound(env: NodeJS.ProcessEnv = process.env, procAsound = '/proc/asound/pcm'): boolean {
  try {
    if (/\bplayback\b/.test(readFileSync(procAsound, 'utf8'))) return true;
  } catch {
    // no ALSA in this kernel or container
  }
  if (env.PULSE_SERVER) return true;
  const runtime = env.XDG_RUNTIME_DIR || (typeof process.getuid === 'function' ? `/run/user/${process.getuid()}` : undefined);
  return runtime !== undefined && (existsSync(join(runtime, 'pulse', 'native')) || existsSync(join(runtime, 'pipewire-0')));
}
