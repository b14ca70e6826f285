// The newest GPS position of one agent: its GPS inputs publish each fix, its remember_location connector reads it.

export interface Position {
  lat: number;
  lon: number;
  altitudeM?: number;
  /** ms since epoch when the fix was read. */
  at: number;
}

/**
 * Owned by the agent (one per agent, as the robot has one position), handed to the inputs and
 * connectors of its modes. Positions older than `maxAgeMs` count as none (a robot indoors loses its fix).
 */
export class PositionBoard {
  private last: Position | undefined;
  publish(position: Position): void {
    this.last = position;
  }
  latest(maxAgeMs = 60_000, now = Date.now()): Position | undefined {
    return this.last && now - this.last.at <= maxAgeMs ? this.last : undefined;
  }
}
