// The sockets panel: each ASR/VLM session's state, attempt, connections, data counters and CU, with its recent state changes; and the MCP tool servers.
import { h } from './panels.js';
import type { SimState, StreamEntry } from './state.js';

const clock = (at: number) => new Date(at).toLocaleTimeString();

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The counters of a session in words: what was sent and dropped, connections, cost. */
function facts(st: StreamEntry): string {
  const parts: string[] = [];
  if (st.reconnects) parts.push(`${st.reconnects} reconnect${st.reconnects === 1 ? '' : 's'}`);
  if (st.attempt !== undefined) parts.push(`attempt ${st.attempt}`);
  if (st.connections !== undefined) parts.push(`${st.connections} connection${st.connections === 1 ? '' : 's'}`);
  if (st.sent_bytes !== undefined) parts.push(`${bytes(st.sent_bytes)} sent`);
  if (st.dropped_bytes !== undefined) parts.push(`${bytes(st.dropped_bytes)} dropped`);
  if (st.frames_sent !== undefined) parts.push(`${st.frames_sent} frames sent`);
  if (st.frames_dropped !== undefined) parts.push(`${st.frames_dropped} dropped`);
  if (st.cost_cu !== undefined) parts.push(`${st.cost_cu.toLocaleString('en', { maximumFractionDigits: 2 })} CU`);
  return parts.join(' · ');
}

/** What the session does now, in words: streaming since when, the next try and the breaker, or why it failed. */
function now(st: StreamEntry): string {
  if (st.state === 'streaming') return st.streaming_since !== undefined ? `streaming since ${clock(st.streaming_since)}` : 'streaming';
  if (st.state === 'backingOff')
    return `waiting${st.delay_ms !== undefined ? ` ${(st.delay_ms / 1000).toFixed(1)} s` : ''} before the next try${st.breaker ? ' (breaker open: the server keeps failing quickly)' : ''}`;
  return st.state;
}

export function renderStreams(box: HTMLElement, s: SimState): void {
  const items: HTMLElement[] = [];
  for (const st of Object.values(s.streams)) {
    const item = h(
      'div',
      'stream',
      h(
        'div',
        null,
        h('span', 'name', `${st.kind.toUpperCase()} · ${st.input} `),
        h('span', `state state-${st.state === 'streaming' ? 'done' : st.state === 'failed' ? 'failed' : 'queued'}`, st.state),
      ),
      h('div', null, now(st)),
    );
    item.dataset.stream = `${st.kind}:${st.input}`;
    item.dataset.state = st.state;
    const counters = facts(st);
    if (counters) item.append(h('div', 'facts', counters));
    if (st.reason && st.state !== 'streaming') item.append(h('div', st.state === 'failed' ? 'bad' : 'muted', st.reason));
    if (st.history.length > 1) {
      const chips = h('div', 'chips');
      for (const change of st.history) {
        const chip = h('span', `chip ${change.state}`, `${clock(change.at)} ${change.state}`);
        if (change.reason) chip.title = change.reason;
        chips.append(chip);
      }
      item.append(chips);
    }
    items.push(item);
  }
  for (const [name, m] of Object.entries(s.mcp)) {
    const item = h(
      'div',
      'stream',
      h('div', null, h('span', 'name', `MCP · ${name} `), h('span', `state state-${m.state === 'failed' ? 'failed' : 'done'}`, m.state)),
    );
    if (m.detail) item.append(h('div', m.state === 'failed' ? 'bad' : 'facts', m.detail));
    items.push(item);
  }
  if (items.length === 0) items.push(h('p', 'note', 'no ASR/VLM socket or tool server in this agent yet'));
  box.replaceChildren(...items);
}
