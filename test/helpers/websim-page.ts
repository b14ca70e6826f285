// Opens a running agent's WebSim page in a browser tab with the token the agent wrote to its state directory, as a person given the terminal's link would.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

/** What the page opener reads of the agent: whether it ended, and its stderr for the failure message. */
interface RunningAgent {
  exitedAt(): number | undefined;
  stderr(): string;
}

/**
 * Loads `http://127.0.0.1:<port>/#token=…` until the page's socket is open: the token file and the
 * server come some time after the agent starts. Throws with the agent's stderr after `withinMs`, or
 * at once when the agent has ended.
 */
export async function openWebSimPage(page: Page, port: number, stateDir: string, agent: RunningAgent, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      // The token WebSim generated in the state directory, given in the fragment as the terminal prints it.
      const tokenFile = join(stateDir, 'websim-token');
      if (!existsSync(tokenFile)) throw new Error('no WebSim token yet');
      await page.goto(`http://127.0.0.1:${port}/#token=${readFileSync(tokenFile, 'utf8').trim()}`);
      await page.locator('#status[data-state="open"]').waitFor({ timeout: 10_000 });
      return;
    } catch (err) {
      if (Date.now() > deadline || agent.exitedAt() !== undefined) throw new Error(`WebSim not reached: ${String(err)}; stderr: ${agent.stderr().slice(-600)}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}
