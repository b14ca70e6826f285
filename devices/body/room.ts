// The simulated body's room: walls and obstacles as segments and circles, and the range along a ray from a pose (what a lidar in it sees).
import type { RoomConfig } from '../../src/config/lidar.js';

type Seg = [number, number, number, number];
interface Circle {
  x: number;
  y: number;
  r: number;
}

/** A room in the simulated body's start frame (x forward, y left, metres). */
export class Room {
  readonly segments: Seg[] = [];
  readonly circles: Circle[] = [];

  constructor(readonly config: RoomConfig) {
    const { x_min: x0, x_max: x1, y_min: y0, y_max: y1 } = config;
    this.box(x0, y0, x1, y1);
    for (const o of config.obstacles) {
      if ('radius_m' in o) this.circles.push({ x: o.x, y: o.y, r: o.radius_m });
      else this.box(o.x - o.depth_m / 2, o.y - o.width_m / 2, o.x + o.depth_m / 2, o.y + o.width_m / 2);
    }
  }

  private box(x0: number, y0: number, x1: number, y1: number): void {
    this.segments.push([x0, y0, x1, y0], [x1, y0, x1, y1], [x1, y1, x0, y1], [x0, y1, x0, y0]);
  }

  /** Distance from (x, y) along the counter-clockwise world angle `rad` to the first wall or obstacle, or Infinity. */
  cast(x: number, y: number, rad: number): number {
    const dx = Math.cos(rad);
    const dy = Math.sin(rad);
    let best = Number.POSITIVE_INFINITY;
    for (const [ax, ay, bx, by] of this.segments) {
      const ex = bx - ax;
      const ey = by - ay;
      const den = dx * ey - dy * ex;
      if (Math.abs(den) < 1e-12) continue;
      const t = ((ax - x) * ey - (ay - y) * ex) / den;
      const u = ((ax - x) * dy - (ay - y) * dx) / den;
      if (t > 0 && u >= 0 && u <= 1 && t < best) best = t;
    }
    for (const c of this.circles) {
      const fx = x - c.x;
      const fy = y - c.y;
      const b = fx * dx + fy * dy;
      const disc = b * b - (fx * fx + fy * fy - c.r * c.r);
      if (disc < 0) continue;
      const t = -b - Math.sqrt(disc);
      if (t > 0 && t < best) best = t;
    }
    return best;
  }
}
