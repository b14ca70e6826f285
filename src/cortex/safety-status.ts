// The safety governor's status as the rest of the agent reads it: the latched e-stop, motion, and why motion is paused.

export interface Latch {
  source: string;
  reason: string;
  at: number;
}

/** What the governor tells anyone who asks (AgentControl.safetyStatus, `cortexd estop --status`, WebSim). */
export interface SafetyStatus {
  /** The latched e-stop, or null. */
  estop: Latch | null;
  motion: 'still' | 'moving' | 'resting';
  stopping: boolean;
  /** Why motion is paused (model, sockets of the hosted service), as `source: reason`. */
  faults: string[];
}
