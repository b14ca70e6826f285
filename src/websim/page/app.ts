// The WebSim page entry: connects the event socket (with reconnects), keeps the state, renders every panel, sends commands.
import { drawFace } from './face.js';
import { renderBody } from './body.js';
import { mountEstop } from './estop.js';
import { highlight, loadGraph, transitionText, type DrawnGraph } from './graph.js';
import { renderLidar } from './lidar.js';
import { renderMedia } from './media.js';
import {
  h,
  renderActions,
  renderAnswer,
  renderRecall,
  renderCounters,
  renderErrors,
  renderHooks,
  renderInputs,
  renderContext,
  renderTranscript,
  renderTurn,
} from './panels.js';
import { renderStreams } from './sockets.js';
import { reduce, type ClientMessage, type ServerMessage, type SimMeta, type SimState } from './state.js';
import { renderCalls, renderTimeline } from './timeline.js';
import { enableZoom } from './zoom.js';
import { mountVoice } from './voice.js';

/*
 * Panels of features added alongside this page register here: a module exporting
 * `render(state)` (and, for events this reducer does not know, its own handling in `onMessage`),
 * drawing into its own section of html.ts (`#safety-slot`, `#turn-panel`).
 */
const extraPanels: Array<(s: SimState) => void> = [];

const $ = (id: string): HTMLElement => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`page element #${id} missing`);
  return e;
};

let meta: SimMeta | null = null;
let state: SimState | null = null;
let graph: DrawnGraph | null = null;
let socket: WebSocket | null = null;
let nextId = 1;
/** The mode the switch note talks about; a transition elsewhere clears the note. */
let noteFor: string | null = null;
const pending = new Map<number, (reply: { ok: boolean; reason?: string }) => void>();
let renderEstop: ((s: SimState) => void) | null = null;
let voice: ReturnType<typeof mountVoice> | null = null;
/**
 * The WebSim token, kept in this page's memory only (never in storage or the address bar): taken from
 * the address's `#token=` fragment (which never reaches the server) or typed in Unlock, and sent as an
 * `auth` message each time the socket opens.
 */
let token: string | null = null;

/** Takes `#token=...` out of the address (so it is not bookmarked or shared by accident) and keeps it. */
function tokenFromFragment(): void {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!m) return;
  token = decodeURIComponent(m[1]!);
  history.replaceState(null, '', location.pathname + location.search);
}

function setAccess(authed: boolean, note?: string): void {
  const a = $('access');
  a.textContent = authed ? 'unlocked' : 'view only';
  a.dataset.state = authed ? 'unlocked' : 'locked';
  if (note) a.title = note;
  ($('unlock-form') as HTMLFormElement).hidden = authed;
}

async function unlock(typed: string): Promise<void> {
  const reply = await send({ type: 'auth', token: typed });
  if (reply.ok) token = typed;
  setAccess(reply.ok, reply.ok ? 'this page may act' : `not unlocked: ${reply.reason ?? 'refused'}`);
  if (!reply.ok) $('access').textContent = 'view only (wrong token)';
}

const label = (mode: string) => meta?.modes.find((m) => m.name === mode)?.display_name ?? mode;

function setStatus(text: string, kind: 'connecting' | 'open' | 'closed'): void {
  const s = $('status');
  s.textContent = text;
  s.dataset.state = kind;
}

function renderButtons(): void {
  if (!meta || !state) return;
  const box = $('switch-buttons');
  const off = meta.allow_manual_switching ? null : meta.manual_disabled_reason;
  box.replaceChildren(
    ...meta.modes.map((m) => {
      const b = h('button', null, m.display_name) as HTMLButtonElement;
      b.type = 'button';
      b.dataset.mode = m.name;
      b.title = off ?? (m.name === state!.mode ? 'current mode' : `switch to ${m.name}: ${m.description}`);
      b.disabled = off !== null || m.name === state!.mode;
      b.setAttribute('aria-pressed', String(m.name === state!.mode));
      b.addEventListener('click', () => void switchTo(m.name));
      return b;
    }),
  );
  const note = $('switch-note');
  if (off) {
    note.textContent = `Switch buttons disabled: ${off}.`;
  } else if (state.lastRefusal && (!state.lastTransition || state.lastRefusal.at > state.lastTransition.at)) {
    // The same words as the reply's note (switchTo), so a later render never rewrites what the page said.
    note.textContent = `Switch to ${label(state.lastRefusal.requested)} refused: ${state.lastRefusal.reason}`;
    note.classList.add('bad');
  }
}

function render(): void {
  if (!meta || !state) return;
  const s = state;
  $('current-mode').textContent = label(s.mode);
  document.body.dataset.mode = s.mode;
  if (graph) highlight(graph, s.mode, s.lastTransition);
  $('transition').textContent = transitionText(s.lastTransition, label);
  renderButtons();
  renderInputs($('inputs'), s);
  renderBody($('body-panel'), $('body-view'), $('body-facts'), s);
  renderContext($('context'), s);
  renderTurn($('turn-panel'), $('turn'), s);
  renderStreams($('streams'), s);
  renderTranscript($('transcript'), s);
  renderTimeline($('timeline'), s, Date.now());
  renderCalls($('calls'), s);
  renderCounters($('counters'), s);
  renderAnswer($('answer'), $('latency'), $('prompt'), s);
  renderRecall($('recalled'), s);
  renderActions($('actions'), s);
  renderHooks($('hooks'), s);
  renderErrors($('errors'), s);
  renderEstop?.(s);
  $('face-emotion').textContent = s.face?.emotion ?? '';
  const face = $('face');
  const shown = face.querySelector('svg')?.dataset.emotion;
  if (shown !== (s.face?.emotion ?? '')) drawFace(face, s.face?.emotion ?? null);
  for (const panel of extraPanels) panel(s);
  if (s.status !== 'running') setStatus(`agent ${s.status}`, 'closed');
}

/** A client message before it gets its id (Omit<> on the union would merge its members). */
type Outgoing = ClientMessage extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

function send(message: Outgoing): Promise<{ ok: boolean; reason?: string }> {
  return new Promise((resolve) => {
    if (!socket || socket.readyState !== WebSocket.OPEN) return resolve({ ok: false, reason: 'not connected to the agent' });
    const id = nextId++;
    pending.set(id, resolve);
    socket.send(JSON.stringify({ ...message, id }));
  });
}

async function switchTo(mode: string): Promise<void> {
  const note = $('switch-note');
  note.classList.remove('bad');
  noteFor = mode;
  note.textContent = `Switching to ${label(mode)}…`;
  const reply = await send({ type: 'mode.switch', mode });
  note.textContent = reply.ok ? `Switched to ${label(mode)}.` : `Switch to ${label(mode)} refused: ${reply.reason ?? 'no reason given'}`;
  note.classList.toggle('bad', !reply.ok);
}

async function sendText(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const input = $('talk-text') as HTMLInputElement;
  const text = input.value.trim();
  if (!text) return;
  const note = $('talk-note');
  const reply = await send({ type: 'text', text });
  note.classList.toggle('bad', !reply.ok);
  note.textContent = reply.ok ? `Sent: ${text}` : `Not sent: ${reply.reason ?? 'refused'}`;
  if (reply.ok) input.value = '';
}

async function sendContext(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const name = ($('context-name') as HTMLInputElement).value.trim();
  const value = ($('context-value') as HTMLInputElement).value.trim();
  if (!name) return;
  const note = $('context-note');
  const reply = await send({ type: 'context', name, value });
  note.classList.toggle('bad', !reply.ok);
  note.textContent = reply.ok ? `Set ${reply.reason ?? name}` : `Not set: ${reply.reason ?? 'refused'}`;
}

function onMessage(message: ServerMessage): void {
  if (message.type === 'snapshot') {
    meta = message.meta;
    state = message.state;
    $('config-name').textContent = meta.name === meta.configName ? meta.name : `${meta.name} (${meta.configName})`;
  } else if (message.type === 'event') {
    if (state) state = reduce(state, message.event);
    // A note about an earlier switch would read as if it described the new mode.
    if (message.event.type === 'mode.changed' && message.event.to !== noteFor) {
      $('switch-note').textContent = '';
      $('switch-note').classList.remove('bad');
      noteFor = null;
    }
  } else if (message.type === 'media') {
    renderMedia(message.media, {
      img: $('camera-frame') as HTMLImageElement,
      badge: $('camera-badge'),
      cameraNote: $('camera-note'),
      meter: $('mic-meter'),
      micNote: $('mic-note'),
    });
    renderLidar($('lidar-panel'), $('lidar-view'), $('lidar-facts'), message.media.scan ?? null);
    return;
  } else if (message.type === 'access') {
    setAccess(message.authed);
    if (!message.authed && token) void unlock(token);
    return;
  } else if (message.type === 'speech') {
    voice?.speech(message);
    return;
  } else if (message.type === 'speech.stop') {
    voice?.stop();
    return;
  } else if (message.type === 'reply') {
    pending.get(message.id)?.({ ok: message.ok, ...(message.reason !== undefined ? { reason: message.reason } : {}) });
    pending.delete(message.id);
    return;
  }
  render();
}

/** Connects the event socket; on close, retries after 0.5 s doubling to 10 s. Auth rides on the session cookie. */
function connect(delay = 500): void {
  setStatus('connecting…', 'connecting');
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/events`);
  socket = ws;
  let opened = false;
  ws.addEventListener('open', () => {
    opened = true;
    setStatus('live', 'open');
  });
  ws.addEventListener('message', (e) => onMessage(JSON.parse(String(e.data)) as ServerMessage));
  ws.addEventListener('close', () => {
    for (const resolve of pending.values()) resolve({ ok: false, reason: 'connection lost' });
    pending.clear();
    voice?.disconnected();
    setStatus('disconnected, retrying…', 'closed');
    const next = opened ? 500 : Math.min(delay * 2, 10_000);
    setTimeout(() => connect(next), opened ? 500 : delay);
  });
}

async function main(): Promise<void> {
  $('talk-form').addEventListener('submit', (e) => void sendText(e as SubmitEvent));
  $('context-form').addEventListener('submit', (e) => void sendContext(e as SubmitEvent));
  $('unlock-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $('unlock-token') as HTMLInputElement;
    const typed = input.value.trim();
    input.value = '';
    if (typed) void unlock(typed);
  });
  tokenFromFragment();
  renderEstop = mountEstop((m) => send(m));
  voice = mountVoice(
    {
      mic: $('mic-button') as HTMLButtonElement,
      listen: $('listen-button') as HTMLButtonElement,
      note: $('voice-note'),
      audio: $('robot-voice') as HTMLAudioElement,
    },
    (m) => send(m),
    (pcm) => {
      if (!socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(pcm);
      return true;
    },
  );
  drawFace($('face'), null);
  try {
    graph = await loadGraph($('graph'));
    enableZoom($('graph'), graph.svg, $('graph-tools'), $('zoom-level'));
  } catch (err) {
    $('graph').textContent = `Statechart unavailable: ${(err as Error).message}`;
  }
  connect();
  render();
  // The timeline's window slides with the clock, also when nothing happens.
  setInterval(() => {
    if (state && document.visibilityState === 'visible') renderTimeline($('timeline'), state, Date.now());
  }, 1000);
}

void main();
