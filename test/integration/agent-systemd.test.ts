// Proves the agent as a systemd service sees it: READY=1 at the first tick, WATCHDOG=1 pings while it ticks, STOPPING=1 on SIGTERM, and live metrics.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { NotifyReceiver } from '../helpers/notify-receiver.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

t.test('a running agent reports readiness, feeds the watchdog, serves metrics (ticks, mode, CU spent) and says when it stops', async (t) => {
  const w = workDir();
  const receiver = new NotifyReceiver();
  t.teardown(() => receiver.close());
  const config = w.file('agent.json5');
  writeFileSync(
    config,
    `{
      version: "v1.0.5", name: "svc", default_mode: "watch", allow_manual_switching: false, mode_memory_enabled: false,
      api_key: "", system_governance: "obey", service: { base_url: "embedded" },
      cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
      modes: { watch: { display_name: "Watch", description: "d", system_prompt_base: "watch", hertz: 5,
        agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${w.socket}" } }],
        agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] } },
    }`,
  );
  const port = await freePort();
  const agent = startAgent(config, w.state, ['--for', '60s'], { NOTIFY_SOCKET: receiver.path, WATCHDOG_USEC: '1000000', CORTEX_METRICS_PORT: String(port) });
  t.teardown(() => void agent.child.kill('SIGKILL'));

  const ready = await receiver.next((m) => m.includes('READY=1'), 20_000);
  t.ok(
    agent.events.some((e) => e.type === 'tick'),
    'READY=1 comes once the loop has ticked',
  );
  const ping = await receiver.next((m) => m.includes('WATCHDOG=1'), 5_000, ready.index);
  await receiver.next((m) => m.includes('WATCHDOG=1'), 5_000, ping.index + 1);
  t.pass('the watchdog is fed while the loop ticks');

  await typeLines(w.socket, ['hello robot']);
  const answer = await agent.waitFor<Extract<AgentEvent, { type: 'model.answer' }>>((e) => e.type === 'model.answer', 15_000, 'model answer');
  t.ok(answer.cost_cu !== undefined && answer.cost_cu >= 1, `the answer says what it cost (${answer.cost_cu} CU)`);

  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  t.equal(res.status, 200);
  const body = await res.text();
  const ticks = /cortexd_ticks_total\{mode="watch"\} (\d+)/.exec(body);
  t.ok(ticks && Number(ticks[1]) >= 1, `ticks are counted per mode (${ticks?.[0] ?? 'no series'})`);
  t.match(body, /cortexd_mode_current\{mode="watch"\} 1/);
  t.match(body, new RegExp(`cortexd_cu_spent_total\\{service="chat"\\} ${answer.cost_cu}\\b`), 'CU spent is counted');

  agent.child.kill('SIGTERM');
  await receiver.next((m) => m.includes('STOPPING=1'), 10_000);
  t.equal(await agent.exited, 0, 'SIGTERM: exit 0');
});
