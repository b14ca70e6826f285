// The robot's bodies in one process: every agent the process runs shares the body of a robot name, as they would share the physical robot
// The move connector and the BodyInput of each agent hold that shared body.

/**
 * Owned by whoever outlives the agents (the `cortexd run` process hands one board to each agent it
 * makes, so a reload keeps the pose; an agent made alone gets its own). The board holds bodies by
 * robot name; what a body is belongs to devices/ (the simulated body), which src/ does not import.
 */
export class BodyBoard {
  private readonly bodies = new Map<string, unknown>();

  /** The body of `robot`, made by `make` the first time it is asked for. Every caller of one robot name makes the same kind of body. */
  of<B>(robot: string, make: () => B): B {
    if (!this.bodies.has(robot)) this.bodies.set(robot, make());
    return this.bodies.get(robot) as B;
  }
}
