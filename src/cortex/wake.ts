// When an input's news is worth a model call: the measures of a meaningful change per kind of input, and the gate a tick asks.
import { visionContextOf } from '../vision/analyse.js';
import type { InputPlugin } from './input.js';

/**
 * How an input's new messages wake the model (the common `wake` field of an input's config):
 * `change` (default) only when they change what the model knows, by the input's own measure;
 * `always` every new message (what every input did before); `never` not by themselves: the input's
 * text rides along in prompts that another input caused.
 */
export type WakeMode = 'change' | 'always' | 'never';

/** Which vision facts count as a change (`wake_on` of the vision inputs). */
export type VisionFact = 'faces' | 'motion';

/** Numbers left out, spacing collapsed: "Slight motion (2% of the view)" and "(4% ...)" are the same news. */
export const textShape = (text: string): string =>
  text
    .replace(/\d+(\.\d+)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * Vision: the number of faces or the motion level (none, slight, strong) changed, as `describe()`
 * words them (src/vision/analyse.ts: the local input and the local service's socket). A description
 * in other words (a hosted model's free text) is a change when its shape differs.
 */
export function visionChanged(previous: string, next: string, facts: readonly VisionFact[] = ['faces', 'motion']): boolean {
  const a = visionContextOf(previous);
  const b = visionContextOf(next);
  if (!a || !b) return textShape(previous) !== textShape(next);
  return facts.some((f) => a[f] !== b[f]);
}

/** `78% (Discharging, 11.9 V, low)` as numbers and words; undefined when the text is not a battery line. */
export function parseBattery(text: string): { percent: number; status: string; low: boolean } | undefined {
  const m = /(\d+(?:\.\d+)?)%\s*\(([^,)]+)([^)]*)\)/.exec(text);
  if (!m) return undefined;
  return { percent: Number(m[1]), status: m[2]!.trim(), low: /,\s*low\b/.test(m[3] ?? '') };
}

/**
 * Battery: the status (Charging, Discharging, Full...) or the low flag changed, or the charge crossed
 * into another `stepPercent` bucket (10: 78% and 71% are the same news, 69% is not).
 */
export function batteryChanged(previous: string, next: string, stepPercent = 10): boolean {
  const a = parseBattery(previous);
  const b = parseBattery(next);
  if (!a || !b) return textShape(previous) !== textShape(next);
  const bucket = (p: number) => Math.floor(p / Math.max(1, stepPercent));
  return a.status !== b.status || a.low !== b.low || bucket(a.percent) !== bucket(b.percent);
}

/** `fix (...), position 48.117300, 11.516667, ...` as a fix flag and a position. */
export function parseGps(text: string): { fix: boolean; lat?: number; lon?: number } | undefined {
  if (/\bno fix\b/.test(text)) return { fix: false };
  if (!/\bfix\b/.test(text)) return undefined;
  const m = /position (-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)/.exec(text);
  return m ? { fix: true, lat: Number(m[1]), lon: Number(m[2]) } : { fix: true };
}

/** Great-circle distance in metres. */
export function distanceM(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** GPS: the fix was gained or lost, or the robot moved at least `metres` from where the model last knew it. */
export function gpsChanged(previous: string, next: string, metres = 25): boolean {
  const a = parseGps(previous);
  const b = parseGps(next);
  if (!a || !b) return textShape(previous) !== textShape(next);
  if (a.fix !== b.fix) return true;
  if (a.lat === undefined || a.lon === undefined || b.lat === undefined || b.lon === undefined) return (a.lat === undefined) !== (b.lat === undefined);
  return distanceM({ lat: a.lat, lon: a.lon }, { lat: b.lat, lon: b.lon }) >= metres;
}

/** Applies a wake mode around an input's measure; `previous` undefined means the model has not seen this input yet. */
export function wakes(mode: WakeMode, previous: string | undefined, next: string, changed: (previous: string, next: string) => boolean): boolean {
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  return previous === undefined || changed(previous, next);
}

/**
 * What the model has seen of each input, and whether an input's new text is news. Kept per plugin
 * instance (a restarted input, or the next entry into a mode, starts from nothing). An input without
 * a measure (`meaningfulChange`) makes every new text news, as before this gate existed.
 */
export class WakeGate {
  private readonly seen = new WeakMap<InputPlugin, string>();

  /** True when `text`, the input's formatted buffer of this tick, should wake the model. */
  isNews(plugin: InputPlugin, text: string): boolean {
    return plugin.meaningfulChange ? plugin.meaningfulChange(this.seen.get(plugin), text) : true;
  }

  /** The model was asked with `text` of this input in its prompt. */
  saw(plugin: InputPlugin, text: string): void {
    this.seen.set(plugin, text);
  }
}
