// Geofence geometry: is a GPS position inside a circle or a polygon of latitude/longitude corners?

export interface LatLonPoint {
  lat: number;
  lon: number;
}

/** The robot's position as the GPS input publishes it (context values gps_fix, latitude, longitude). */
export interface Position extends LatLonPoint {
  fix: boolean;
}

export type Fence = { kind: 'circle'; center: LatLonPoint; radiusM: number } | { kind: 'polygon'; corners: LatLonPoint[] };

const EARTH_RADIUS_M = 6_371_008.8;
const rad = (deg: number) => (deg * Math.PI) / 180;

/** Great-circle distance in metres (haversine). */
export function distanceM(a: LatLonPoint, b: LatLonPoint): number {
  const dLat = rad(b.lat - a.lat);
  const dLon = rad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Ray casting on latitude/longitude as plane coordinates: exact enough for fences of a few kilometres away from the poles and the date line. */
function inPolygon(p: LatLonPoint, corners: readonly LatLonPoint[]): boolean {
  let inside = false;
  for (let i = 0, j = corners.length - 1; i < corners.length; j = i++) {
    const a = corners[i]!;
    const b = corners[j]!;
    if (a.lat > p.lat !== b.lat > p.lat && p.lon < ((b.lon - a.lon) * (p.lat - a.lat)) / (b.lat - a.lat) + a.lon) inside = !inside;
  }
  return inside;
}

/** True when the position is outside the fence, or unknown (no position, or no fix): the safe answer. */
export function outsideFence(fence: Fence, position: Position | null): boolean {
  if (!position || !position.fix || !Number.isFinite(position.lat) || !Number.isFinite(position.lon)) return true;
  return fence.kind === 'circle' ? distanceM(fence.center, position) > fence.radiusM : !inPolygon(position, fence.corners);
}

/** A position from context values (`gps_fix`, `latitude`, `longitude`), or null when they carry none. */
export function positionOf(values: Readonly<Record<string, unknown>>, previous: Position | null): Position | null {
  const fix = typeof values.gps_fix === 'boolean' ? values.gps_fix : previous?.fix;
  const lat = typeof values.latitude === 'number' ? values.latitude : previous?.lat;
  const lon = typeof values.longitude === 'number' ? values.longitude : previous?.lon;
  if (fix === undefined && lat === undefined && lon === undefined) return previous;
  return { fix: fix ?? false, lat: lat ?? Number.NaN, lon: lon ?? Number.NaN };
}
