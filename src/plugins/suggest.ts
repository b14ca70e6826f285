// "Did you mean": the known name closest to a misspelt one (edit distance), for every unknown-name message of `cortexd check`.

/** Edit distance with adjacent transpositions (optimal string alignment), case-insensitive: `idel` is one edit from `idle`. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[s.length]![t.length]!;
}

/**
 * The closest known name when it is close enough to be a typo (at most a third of the name's letters
 * differ, at least one allowed; `maxDistance` edits when given), else undefined. Ties go to the first name in `known`.
 */
export function closest(name: string, known: Iterable<string>, maxDistance?: number): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const allowed = maxDistance ?? Math.max(1, Math.floor(Math.max(name.length, 3) / 3));
  for (const k of known) {
    if (k === name) continue;
    // The distance is at least the difference in length: a name that much longer or shorter is no typo
    // (and a megabyte-long value is never compared letter by letter).
    if (Math.abs(k.length - name.length) > allowed) continue;
    const d = editDistance(name, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= allowed ? best : undefined;
}

/** `; did you mean "move"?` when a known name is close, else the empty string: appended to a message. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const c = closest(name, known);
  return c === undefined ? '' : `; did you mean ${JSON.stringify(c)}?`;
}
