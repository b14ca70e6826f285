// The WebSim page shell: one HTML document whose panels the page modules fill from the socket (its stylesheet is style.ts).
export { STYLE } from './style.js';

/** Content-Security-Policy of every response: only this origin's scripts, styles and socket; nothing from the network. */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  // The robot's speech plays from blob: URLs the page makes of each sentence.
  "media-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The document's head: its title (the configuration name, escaped), the stylesheet and the page's module; then the body opens. */
function documentHead(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · cortexd WebSim</title>
<link rel="stylesheet" href="/style.css">
<script type="module" src="/static/app.js"></script>
</head>
<body>`;
}

/** The header: the configuration name, the e-stop slot, the token form, access and connection state. */
function pageHeader(title: string): string {
  return `<header>
  <h1><span id="config-name">${esc(title)}</span> <small>cortexd WebSim</small></h1>
  <div class="header-right">
    <div id="safety-slot" class="slot" data-slot="safety"></div>
    <form id="unlock-form" class="unlock" autocomplete="off">
      <input id="unlock-token" type="password" placeholder="WebSim token" aria-label="WebSim token" autocomplete="off">
      <button type="submit">Unlock</button>
    </form>
    <div id="access" class="pill" data-state="locked" title="watching and the e-stop need no token; switching modes, typing, context values and releasing the e-stop do">view only</div>
    <div id="status" class="pill" data-state="connecting">connecting…</div>
  </div>
</header>`;
}

/** The mode statechart with its zoom tools, the current mode, the last transition and the switch buttons. */
const GRAPH_PANEL = `  <section id="graph-panel" class="panel full">
    <h2>Modes <span id="current-mode" class="badge"></span>
      <span id="graph-tools" class="tools" aria-label="zoom">
        <button type="button" data-zoom="out" title="zoom out">−</button>
        <span id="zoom-level" class="zoom-level">100%</span>
        <button type="button" data-zoom="in" title="zoom in">+</button>
        <button type="button" data-zoom="fit" title="fit the chart to the panel">Fit</button>
        <button type="button" data-zoom="1" title="actual size">1:1</button>
      </span>
    </h2>
    <div id="graph" class="graph-view" aria-label="mode statechart (drag to pan, Ctrl + wheel to zoom)"></div>
    <p id="transition" class="note"></p>
    <div id="switch-buttons" class="buttons"></div>
    <p id="switch-note" class="note"></p>
  </section>`;

/** The conversation: the transcript, typed input, and the two voice buttons (Talk, Hear the robot). */
const TALK_PANEL = `  <section id="talk-panel" class="panel">
    <h2>Conversation</h2>
    <ol id="transcript" class="log chat"></ol>
    <form id="talk-form" autocomplete="off">
      <input id="talk-text" name="text" maxlength="2000" placeholder="Type to the robot…">
      <button id="talk-send" type="submit">Send</button>
    </form>
    <p id="talk-note" class="note"></p>
    <div class="buttons voice" title="Talk streams this browser's microphone to the robot (needs the WebSim token); the robot's speech then plays here">
      <button id="mic-button" type="button" aria-pressed="false">Talk</button>
      <button id="listen-button" type="button" aria-pressed="false">Hear the robot</button>
    </div>
    <audio id="robot-voice" hidden></audio>
    <p id="voice-note" class="note"></p>
  </section>`;

/** The newest camera frame and the microphone level. */
const CAMERA_PANEL = `  <section id="camera-panel" class="panel">
    <h2>Camera <span id="camera-badge" class="badge"></span></h2>
    <div class="camera"><img id="camera-frame" alt="the newest camera frame" hidden></div>
    <p id="camera-note" class="note"></p>
    <h3>Microphone</h3>
    <div id="mic-meter" class="meter" role="meter" aria-label="microphone level" aria-valuemin="-90" aria-valuemax="0"><div class="rms"></div><div class="peak"></div></div>
    <p id="mic-note" class="note"></p>
  </section>`;

/** The face and the counters. */
const FACE_PANEL = `  <section id="face-panel" class="panel">
    <h2>Face <span id="face-emotion" class="badge"></span></h2>
    <div id="face"></div>
    <h3>Counters</h3>
    <dl id="counters" class="grid"></dl>
  </section>`;

/** Model calls and actions over the last minute, and the list of model calls. */
const TIMELINE_PANEL = `  <section id="timeline-panel" class="panel wide">
    <h2>Timeline <span id="timeline-span" class="badge"></span></h2>
    <div id="timeline" aria-label="model calls and actions over the last minute"></div>
    <h3>Model calls</h3>
    <ol id="calls" class="log"></ol>
  </section>`;

/** The simulated body (hidden until a body reports). */
const BODY_PANEL = `  <section id="body-panel" class="panel" hidden>
    <h2>Body</h2>
    <div id="body-view" class="body-view"></div>
    <dl id="body-facts" class="grid"></dl>
  </section>`;

/** The lidar scan (hidden until a lidar reports). */
const LIDAR_PANEL = `  <section id="lidar-panel" class="panel" hidden>
    <h2>Lidar</h2>
    <div id="lidar-view" class="lidar-view"></div>
    <dl id="lidar-facts" class="grid"></dl>
  </section>`;

/** The recognition and vision sockets. */
const SOCKETS_PANEL = `  <section id="sockets-panel" class="panel">
    <h2>Sockets</h2>
    <div id="streams"></div>
  </section>`;

/** The last turn's latency by stage (hidden until its module unhides it). */
const TURN_PANEL = `  <section id="turn-panel" class="panel" data-slot="turn-latency" hidden>
    <h2>Last turn</h2>
    <div id="turn"></div>
  </section>`;

/** The model's answer, what was recalled for it, and the last prompt. */
const MODEL_PANEL = `  <section id="model-panel" class="panel wide">
    <h2>Model <span id="latency" class="badge"></span></h2>
    <h3>Answer</h3>
    <div id="answer"></div>
    <h3>Recalled</h3>
    <ul id="recalled" class="recalled"></ul>
    <details><summary>Last prompt</summary><pre id="prompt"></pre></details>
  </section>`;

/** The inputs, the context values, and the form that sets one. */
const INPUTS_PANEL = `  <section id="inputs-panel" class="panel">
    <h2>Inputs</h2>
    <dl id="inputs" class="grid"></dl>
    <h3>Context values</h3>
    <dl id="context" class="grid"></dl>
    <form id="context-form" autocomplete="off" title="a value for context_aware rules: true/false and numbers are typed as such">
      <input id="context-name" name="name" maxlength="100" placeholder="name, e.g. battery_percent" pattern="[A-Za-z_][A-Za-z0-9_]*" required>
      <input id="context-value" name="value" maxlength="200" placeholder="value, e.g. 15">
      <button id="context-set" type="submit">Set</button>
    </form>
    <p id="context-note" class="note"></p>
  </section>`;

/** The actions. */
const ACTIONS_PANEL = `  <section id="actions-panel" class="panel">
    <h2>Actions</h2>
    <ol id="actions" class="log"></ol>
  </section>`;

/** The hooks that ran, and the errors. */
const HOOKS_PANEL = `  <section id="hooks-panel" class="panel">
    <h2>Hooks</h2>
    <ol id="hooks" class="log"></ol>
    <h3>Errors</h3>
    <ol id="errors" class="log"></ol>
  </section>`;

/** The panels in the order the page shows them. */
const PANELS = [
  GRAPH_PANEL,
  TALK_PANEL,
  CAMERA_PANEL,
  FACE_PANEL,
  TIMELINE_PANEL,
  BODY_PANEL,
  LIDAR_PANEL,
  SOCKETS_PANEL,
  TURN_PANEL,
  MODEL_PANEL,
  INPUTS_PANEL,
  ACTIONS_PANEL,
  HOOKS_PANEL,
];

/**
 * The document; `title` is the configuration name (escaped). Panels are independent sections, each
 * filled by one page module; two places are kept for features that other work adds: `#safety-slot`
 * in the header (an emergency stop and its state) and the hidden `#turn-panel` (the last turn's
 * latency by stage), which its module unhides.
 */
export function pageHtml(title: string): string {
  return [documentHead(title), pageHeader(title), '<main>', ...PANELS, '</main>', '</body>', '</html>', ''].join('\n');
}
