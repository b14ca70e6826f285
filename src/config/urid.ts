// URID (universal robot id): two letters, then 12 letters or digits; 14 characters, not case sensitive.

/**
 * The spec says a URID "begins with a fixed two-letter prefix followed by 12 alphanumeric
 * characters" without naming the prefix. The prefix is fixed by whoever issues the ids, so this
 * runtime accepts any two ASCII letters and normalises the whole id to upper case, so that
 * `om1a2b3c4d5e6f` and `OM1A2B3C4D5E6F` are the same robot. The empty string and OM1's placeholder
 * `default` mean "no URID".
 */
const URID = /^[A-Za-z]{2}[A-Za-z0-9]{12}$/;
const PLACEHOLDERS = new Set(['', 'default']);

export type UridCheck = { ok: true; urid: string | undefined } | { ok: false; message: string };

export function checkUrid(raw: unknown): UridCheck {
  if (raw === undefined || raw === null) return { ok: true, urid: undefined };
  if (typeof raw !== 'string') return { ok: false, message: `expected a string, got ${JSON.stringify(raw)}` };
  const value = raw.trim();
  if (PLACEHOLDERS.has(value.toLowerCase())) return { ok: true, urid: undefined };
  if (!URID.test(value)) {
    return {
      ok: false,
      message: `not a valid URID ${JSON.stringify(raw)}: expected a two-letter prefix and 12 letters or digits (14 characters), for example "OM1A2B3C4D5E6F"`,
    };
  }
  return { ok: true, urid: value.toUpperCase() };
}
