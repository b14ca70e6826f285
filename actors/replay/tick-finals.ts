// Which final inputs (typed lines, transcripts) each prompt took: the key that pairs a replayed model call with the recorded call of the same turn.
/** An event of a run as the recording holds it (or as the replay's bus emits it). */
type Seen = { type: string; mode?: unknown; final?: unknown; text?: unknown };

/**
 * Fed a run's events in order (recorded or replayed alike), it answers for each `prompt` event the
 * final inputs its mode received since the mode's previous prompt, one text per line. A tick gathers
 * its inputs just before it emits its prompt, so these are the finals that tick answered; a tick that
 * took none (a timer's tick, a sensor's) has the key ''. A mode change forgets what no prompt took
 * (a keyword that switched the mode emits no prompt).
 */
export class TickFinals {
  private readonly since = new Map<string, string[]>();

  /** The key of `e` when it is a prompt, else undefined (and an input is remembered). */
  see(e: Seen): string | undefined {
    const mode = String(e.mode);
    if (e.type === 'input' && e.final === true) {
      const list = this.since.get(mode) ?? [];
      list.push(String(e.text));
      this.since.set(mode, list);
      return undefined;
    }
    if (e.type === 'mode.changed') this.since.clear();
    if (e.type !== 'prompt') return undefined;
    const key = (this.since.get(mode) ?? []).join('\n');
    this.since.delete(mode);
    return key;
  }
}
