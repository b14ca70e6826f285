// WebSim's config block as a zod schema (address, port, token): data only; the loopback rule is applied in src/websim/options.ts.
import { z } from 'zod';
import { MIN_TOKEN_LENGTH, tokenWeakness } from './token-strength.js';

export { MIN_TOKEN_LENGTH };

/** The environment variable that supplies the token when the config block has none. */
export const TOKEN_ENV = 'CORTEX_WEBSIM_TOKEN';

export const WebSimOptions = z.looseObject({
  /** Address to bind. Loopback (127.0.0.0/8, ::1, localhost) by default; anything else needs a token. */
  host: z.string().min(1).default('127.0.0.1').describe('address to bind; anything but loopback requires a token'),
  /** TCP port; 0 picks a free one (tests). */
  port: z.number().int().min(0).max(65535).default(8000).describe('TCP port of the page (0: any free port)'),
  /**
   * When set, every request and socket needs it (the page too); mandatory for a non-loopback host.
   * When not set, one is generated (kept 0600 in the state directory): viewing stays open on
   * loopback, acting (release, mode switches, text, context values) needs it. The error of a weak
   * token never repeats the token.
   */
  token: z
    .string({ error: 'a WebSim token must be a string' })
    .min(MIN_TOKEN_LENGTH, `a WebSim token needs at least ${MIN_TOKEN_LENGTH} characters`)
    .superRefine((value, ctx) => {
      // Shorter ones already have the min's message; the value never goes into a message.
      const why = [...value].length >= MIN_TOKEN_LENGTH ? tokenWeakness(value) : undefined;
      if (why) ctx.addIssue({ code: 'custom', message: why });
    })
    .optional()
    .describe(`access token (or ${TOKEN_ENV}); required when host is not loopback; generated when absent`),
});
export type WebSimOptions = z.infer<typeof WebSimOptions>;
