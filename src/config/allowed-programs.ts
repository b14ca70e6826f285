// The robot's own allowlist of programs a pushed configuration may start (`fleet.allowed_programs`): one entry per program with its exact arguments.
import { z } from 'zod';

/** One program the robot allows a pushed configuration to start. */
export const AllowedProgram = z.union([
  z.strictObject({
    program: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
  }),
  z.strictObject({
    function: z.string().min(1),
    args: z.unknown().optional(),
  }),
  z.strictObject({ device: z.string().min(1) }),
]);
export type AllowedProgram = z.infer<typeof AllowedProgram>;
export const AllowedPrograms = z.array(AllowedProgram);
