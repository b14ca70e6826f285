// What a context may hold: plain data (JSON carries it as it is) and actor references; the path of the first value that is not.

/** The path of the first value in `value` that JSON would not carry as it is (a function, a class instance, undefined in an array...), or undefined when it is plain data. */
export function firstNonData(value: unknown, path = 'context', within = new Set<unknown>()): string | undefined {
  if (value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${path} (${value})`;
  if (typeof value !== 'object') return `${path} (${typeof value})`;
  // A value shared by two fields serialises twice, which is fine; one inside itself does not serialise at all.
  if (within.has(value)) return `${path} (a cycle)`;
  // An actor reference serialises to its id (XState's own toJSON): references are addresses, which are data.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function' && 'sessionId' in value) return undefined;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return `${path} (${(value as object).constructor?.name ?? 'object'})`;
  within.add(value);
  try {
    const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v]) : Object.entries(value).map(([k, v]) => [`.${k}`, v]);
    for (const [key, v] of entries) {
      if (typeof v === 'function') return `${path}${key} (function)`;
      const bad = firstNonData(v, `${path}${key}`, within);
      if (bad) return bad;
    }
    return undefined;
  } finally {
    within.delete(value);
  }
}
