// Battery board lines: one reading per line, JSON `{"percent":78,"charging":false}` or plain `BAT 78` / `BAT 78 CHG`.

export interface BatteryLineReading {
  /** Charge in percent (0..100). */
  percent: number;
  charging: boolean;
}

const PLAIN = /^BAT\s+(\d+(?:\.\d+)?)(?:\s+(CHG))?$/i;

const percentOf = (n: unknown): number | undefined => (typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 100 ? Math.round(n) : undefined);

const show = (line: string) => JSON.stringify(line.length > 60 ? `${line.slice(0, 60)}...` : line);

/**
 * A reading, `undefined` for a blank line (ignored), or a sentence saying why the line is not one.
 * JSON: `percent` a number 0..100 (rounded), `charging` a boolean (absent: false). Plain: `BAT <percent>`,
 * `CHG` after it when charging (case-insensitive).
 */
export function parseBatteryLine(raw: string): BatteryLineReading | string | undefined {
  const line = raw.trim();
  if (line === '') return undefined;
  if (line.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return `not a battery reading (bad JSON): ${show(line)}`;
    }
    const o = value as { percent?: unknown; charging?: unknown };
    const percent = percentOf(o.percent);
    if (percent === undefined) return `not a battery reading ("percent" must be a number 0..100): ${show(line)}`;
    if (o.charging !== undefined && typeof o.charging !== 'boolean') return `not a battery reading ("charging" must be true or false): ${show(line)}`;
    return { percent, charging: o.charging === true };
  }
  const m = PLAIN.exec(line);
  const percent = m ? percentOf(Number(m[1])) : undefined;
  if (!m || percent === undefined) return `not a battery reading (expected BAT <0..100> [CHG] or {"percent":..,"charging":..}): ${show(line)}`;
  return { percent, charging: m[2] !== undefined };
}
