// The keys no configuration may hold (they reach an object's prototype), and where a parsed value holds them.

/**
 * Keys no configuration may hold, at any depth: `__proto__` turns into an object's prototype the
 * moment any code copies it with `obj[key] = value` (and zod, spread or a placeholder pass would then
 * read its contents as real fields: a hidden `handler_type: "command"`), and `constructor` and
 * `prototype` name the same machinery. No field of the format is called so; refusing them at the
 * edge keeps every later copy safe.
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Every path in `value` whose last key is one of FORBIDDEN_KEYS (own keys only, as a parser makes them). */
export function forbiddenKeyPaths(value: unknown): Array<Array<string | number>> {
  const found: Array<Array<string | number>> = [];
  const walk = (v: unknown, path: Array<string | number>, depth: number) => {
    if (depth > 200 || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, [...path, i], depth + 1));
      return;
    }
    for (const key of Object.keys(v)) {
      if (FORBIDDEN_KEYS.has(key)) found.push([...path, key]);
      else walk((v as Record<string, unknown>)[key], [...path, key], depth + 1);
    }
  };
  walk(value, [], 0);
  return found;
}
