// The decisions of a run (mode changes, actions with their arguments, safety refusals, passages recalled) and where two runs' decisions differ.

/** One decision, as comparable text: `mode idle -> conversation (input_triggered)`, `action move {"action":"turn left"}`. */
export interface Decision {
  kind: 'mode' | 'action' | 'refused' | 'recall';
  text: string;
  /** ms from the start of its run. */
  atMs: number;
}

type EventLike = { type?: unknown; at?: unknown; [k: string]: unknown };

/** Stable JSON: object keys sorted, so `{a,b}` and `{b,a}` compare equal. */
function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Decisions of a run's events in order; `start` is the run's first event time. */
export function decisionsOf(events: EventLike[]): Decision[] {
  const start = typeof events[0]?.at === 'number' ? events[0].at : 0;
  const out: Decision[] = [];
  for (const e of events) {
    const atMs = (typeof e.at === 'number' ? e.at : start) - start;
    if (e.type === 'mode.changed') out.push({ kind: 'mode', text: `mode ${String(e.from)} -> ${String(e.to)} (${String(e.trigger)})`, atMs });
    else if (e.type === 'action' && e.state === 'queued') out.push({ kind: 'action', text: `action ${String(e.label)} ${stable(e.value)}`, atMs });
    else if (e.type === 'safety' && e.kind === 'refused')
      out.push({ kind: 'refused', text: `refused ${String(e.label ?? '?')} ${String(e.value ?? '')} (${String(e.cause ?? e.reason)})`, atMs });
    else if (e.type === 'recall' && Array.isArray(e.used)) {
      // The passages a turn was given from the knowledge base: a changed document changes them. Memories are
      // left out: a replay runs on a fresh state directory, so the memory of the recorded robot is not there.
      const used = (e.used as Array<{ kind?: unknown; source?: unknown; score?: unknown }>)
        .filter((u) => u.kind === 'knowledge')
        .map((u) => `${String(u.source)} ${Number(u.score).toFixed(2)}`);
      out.push({ kind: 'recall', text: `recall ${used.length ? used.join(', ') : '(none)'}`, atMs });
    }
  }
  return out;
}

export interface DecisionDiff {
  same: boolean;
  /** Aligned rows: both sides equal, or one side only (`undefined` on the other). */
  rows: Array<{ recorded?: Decision; replayed?: Decision }>;
}

/** Aligns two decision lists by their longest common subsequence (n·m cells; runs have hundreds, not millions, of decisions). */
export function diffDecisions(recorded: Decision[], replayed: Decision[]): DecisionDiff {
  const n = recorded.length;
  const m = replayed.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = recorded[i]!.text === replayed[j]!.text ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const rows: DecisionDiff['rows'] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && recorded[i]!.text === replayed[j]!.text) rows.push({ recorded: recorded[i++]!, replayed: replayed[j++]! });
    else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) rows.push({ replayed: replayed[j++]! });
    else rows.push({ recorded: recorded[i++]! });
  }
  return { same: rows.every((r) => r.recorded && r.replayed), rows };
}

/** The differing rows side by side, with a row of context before each run of differences. */
export function formatDiff(diff: DecisionDiff, width = 60): string[] {
  const cell = (d: Decision | undefined) => (d ? `${(d.atMs / 1000).toFixed(1).padStart(7)}s ${d.text}` : '').slice(0, width).padEnd(width);
  const lines = [`${'recorded'.padEnd(width)} | replayed`];
  diff.rows.forEach((row, k) => {
    const differs = !(row.recorded && row.replayed);
    const prev = diff.rows[k - 1];
    if (differs && prev && prev.recorded && prev.replayed) lines.push(`${cell(prev.recorded)} | ${cell(prev.replayed).trimEnd()}`);
    if (differs)
      lines.push(`${cell(row.recorded)} ${row.recorded && !row.replayed ? '<' : row.replayed && !row.recorded ? '>' : '|'} ${cell(row.replayed).trimEnd()}`);
  });
  return lines;
}
