// The WebSim page shell: one HTML document and its stylesheet; the page module fills the panels from the socket.

/** Content-Security-Policy of every response: only this origin's scripts, styles and socket; nothing from the network. */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The document; `title` is the configuration name (escaped). */
export function pageHtml(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · cortexd WebSim</title>
<link rel="stylesheet" href="/style.css">
<script type="module" src="/static/app.js"></script>
</head>
<body>
<header>
  <h1><span id="config-name">${esc(title)}</span> <small>cortexd WebSim</small></h1>
  <div id="status" class="pill" data-state="connecting">connecting…</div>
</header>
<main>
  <section id="graph-panel" class="panel wide">
    <h2>Modes <span id="current-mode" class="badge"></span></h2>
    <div id="graph" aria-label="mode statechart"></div>
    <p id="transition" class="note"></p>
    <div id="switch-buttons" class="buttons"></div>
    <p id="switch-note" class="note"></p>
  </section>
  <section id="face-panel" class="panel">
    <h2>Face <span id="face-emotion" class="badge"></span></h2>
    <div id="face"></div>
  </section>
  <section id="talk-panel" class="panel">
    <h2>Talk</h2>
    <form id="talk-form" autocomplete="off">
      <input id="talk-text" name="text" maxlength="2000" placeholder="Type to the robot…">
      <button id="talk-send" type="submit">Send</button>
    </form>
    <p id="talk-note" class="note"></p>
    <h3>Counters</h3>
    <dl id="counters" class="grid"></dl>
  </section>
  <section id="inputs-panel" class="panel">
    <h2>Inputs</h2>
    <dl id="inputs" class="grid"></dl>
    <h3>Sockets</h3>
    <dl id="streams" class="grid"></dl>
  </section>
  <section id="actions-panel" class="panel">
    <h2>Actions</h2>
    <ol id="actions" class="log"></ol>
  </section>
  <section id="model-panel" class="panel wide">
    <h2>Model <span id="latency" class="badge"></span></h2>
    <h3>Answer</h3>
    <div id="answer"></div>
    <details><summary>Last prompt</summary><pre id="prompt"></pre></details>
  </section>
  <section id="hooks-panel" class="panel">
    <h2>Hooks</h2>
    <ol id="hooks" class="log"></ol>
    <h3>Errors</h3>
    <ol id="errors" class="log"></ol>
  </section>
</main>
</body>
</html>
`;
}

export const STYLE = `
:root { --bg:#f4f5f7; --panel:#fff; --ink:#1d2330; --muted:#6b7280; --accent:#2563eb; --ok:#15803d; --bad:#b91c1c; --warn:#b45309; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; background:var(--bg); color:var(--ink); }
header { display:flex; align-items:center; justify-content:space-between; padding:10px 18px; background:#1d2330; color:#fff; }
header h1 { margin:0; font-size:18px; } header small { color:#9ca3af; font-weight:normal; }
main { display:grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap:12px; padding:12px; }
.panel { background:var(--panel); border-radius:8px; padding:10px 14px; box-shadow:0 1px 2px rgba(0,0,0,.08); min-width:0; }
.panel.wide { grid-column: span 2; }
h2 { margin:0 0 8px; font-size:15px; display:flex; gap:8px; align-items:center; }
h3 { margin:10px 0 4px; font-size:12px; text-transform:uppercase; color:var(--muted); letter-spacing:.04em; }
.badge { font-size:12px; font-weight:600; background:#e0e7ff; color:#1e3a8a; border-radius:10px; padding:1px 8px; }
.pill { font-size:12px; border-radius:10px; padding:2px 10px; background:#374151; }
.pill[data-state="open"] { background:var(--ok); } .pill[data-state="closed"] { background:var(--bad); }
.note { color:var(--muted); margin:6px 0; min-height:1.2em; }
.note.bad { color:var(--bad); }
#graph { overflow:auto; max-height:420px; }
#graph svg { max-width:100%; height:auto; }
#graph .node.current path, #graph .node.current polygon, #graph .mode.current rect { fill:#dbeafe; stroke:var(--accent); stroke-width:3px; }
#graph .node.previous path, #graph .node.previous polygon, #graph .mode.previous rect { stroke:var(--warn); stroke-dasharray:4 3; stroke-width:2px; }
#graph .edge.last path { stroke:var(--warn); stroke-width:3px; } #graph .edge.last polygon { fill:var(--warn); stroke:var(--warn); }
#graph text.last { fill:var(--warn); font-weight:bold; }
.buttons { display:flex; flex-wrap:wrap; gap:6px; }
button { font:inherit; padding:4px 12px; border-radius:6px; border:1px solid #cbd5e1; background:#fff; cursor:pointer; }
button[aria-pressed="true"] { background:var(--accent); color:#fff; border-color:var(--accent); }
button:disabled { cursor:not-allowed; opacity:.55; }
form { display:flex; gap:6px; } input[type=text], input:not([type]) { flex:1; font:inherit; padding:4px 8px; border-radius:6px; border:1px solid #cbd5e1; }
.grid { display:grid; grid-template-columns:max-content 1fr; gap:2px 10px; margin:0; }
.grid dt { color:var(--muted); } .grid dd { margin:0; overflow-wrap:anywhere; }
.log { list-style:none; margin:0; padding:0; max-height:260px; overflow:auto; }
.log li { padding:3px 0; border-bottom:1px solid #eef0f3; overflow-wrap:anywhere; }
.state { display:inline-block; min-width:70px; font-size:11px; font-weight:600; text-transform:uppercase; }
.state-queued { color:var(--muted); } .state-running { color:var(--accent); } .state-done { color:var(--ok); }
.state-failed, .state-dropped, .state-interrupted { color:var(--bad); }
.ok { color:var(--ok); } .bad { color:var(--bad); }
.time { color:var(--muted); font-size:11px; margin-right:6px; }
pre { white-space:pre-wrap; overflow-wrap:anywhere; max-height:240px; overflow:auto; background:#f8fafc; padding:6px; border-radius:6px; margin:4px 0; }
.call { font-family: ui-monospace, Menlo, monospace; font-size:12px; }
#face { display:flex; justify-content:center; } #face svg { width:180px; height:180px; }
.estop { display:flex; flex-wrap:wrap; align-items:center; gap:12px; padding:8px 18px; background:#fff1f2; border-bottom:2px solid var(--bad); }
.estop[data-latched="true"] { background:var(--bad); color:#fff; }
.estop-button { font-size:20px; font-weight:800; letter-spacing:.04em; padding:10px 28px; background:var(--bad); color:#fff; border:3px solid #7f1d1d; border-radius:40px; }
.estop[data-latched="true"] .estop-button { background:#7f1d1d; }
.estop-release { display:flex; gap:6px; } .estop-release[hidden] { display:none; }
.estop[data-latched="true"] .note { color:#fff; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } .panel.wide { grid-column: auto; } }
`;
