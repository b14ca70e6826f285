// How the page shows values to a person (no DOM: the server's tests import it too): times as times.

/** A context value as a person reads it: a time (`*_at`, epoch ms) as the date and time, anything else as JSON. */
export function shownValue(name: string, value: unknown): string {
  if ((name === 'at' || name.endsWith('_at')) && typeof value === 'number' && value > 1e12) return new Date(value).toLocaleString();
  return JSON.stringify(value);
}
