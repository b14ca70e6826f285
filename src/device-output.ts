// What a device program printed, turned into one line in our words: "no sound card" for ALSA/PulseAudio dumps, else the program's last line, whole words only.

/** The raw output is kept (the last this many characters) for `--verbose` and the log, never for the view's line. */
export const KEPT_OUTPUT = 2000;

/**
 * True when the output says there is no audio device at all: ALSA without a card (`cannot find card`,
 * `no soundcards found`, `Unknown PCM default`), or no PulseAudio/PipeWire server to talk to.
 */
export function noAudioDevice(output: string): boolean {
  return /cannot find card|no soundcards found|Unknown PCM|audio open error: No such file or directory|snd_pcm_open|Connection refused|Connection failure|No such device/i.test(
    output,
  );
}

/** At most `max` characters of one line, cut at a word boundary with "..." (never mid-word), no control characters. */
export function oneLine(text: string, max = 160): string {
  const flat = text
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/ {2,}/g, ' ')
    .trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, '')}...`;
}

/** The last non-empty line of a program's output, as one short line; '' when it printed nothing. */
export function lastLine(output: string, max = 160): string {
  const lines = output.split(/\r?\n/).filter((l) => l.trim() !== '');
  return lines.length ? oneLine(lines[lines.length - 1]!, max) : '';
}
