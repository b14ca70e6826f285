// WebSim's config block as a zod schema (address, port, token): data only; the loopback rule is applied in src/websim/options.ts.
import { z } from 'zod';

/** The environment variable that supplies the token when the config block has none. */
export const TOKEN_ENV = 'CORTEX_WEBSIM_TOKEN';

/** Shortest token accepted: a page reachable from a network must not be guarded by a guessable word. */
export const MIN_TOKEN_LENGTH = 16;

export const WebSimOptions = z.looseObject({
  /** Address to bind. Loopback (127.0.0.0/8, ::1, localhost) by default; anything else needs a token. */
  host: z.string().min(1).default('127.0.0.1').describe('address to bind; anything but loopback requires a token'),
  /** TCP port; 0 picks a free one (tests). */
  port: z.number().int().min(0).max(65535).default(8000).describe('TCP port of the page (0: any free port)'),
  /** Required on every request and socket when set; mandatory for a non-loopback host. */
  token: z
    .string()
    .min(MIN_TOKEN_LENGTH, `a WebSim token needs at least ${MIN_TOKEN_LENGTH} characters`)
    .optional()
    .describe(`access token (or ${TOKEN_ENV}); required when host is not loopback`),
});
export type WebSimOptions = z.infer<typeof WebSimOptions>;
