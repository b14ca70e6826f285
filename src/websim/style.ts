// The stylesheet of the WebSim page: layout of the panels, the statechart's highlight and zoom, the timeline, the meters.

export const STYLE = `
:root { --bg:#f4f5f7; --panel:#fff; --ink:#1d2330; --muted:#6b7280; --accent:#2563eb; --ok:#15803d; --bad:#b91c1c; --warn:#b45309; --model:#7c3aed; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; background:var(--bg); color:var(--ink); }
header { display:flex; align-items:center; justify-content:space-between; padding:10px 18px; background:#1d2330; color:#fff; }
header h1 { margin:0; font-size:18px; } header small { color:#9ca3af; font-weight:normal; }
.header-right { display:flex; align-items:center; gap:12px; }
main { display:grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap:12px; padding:12px; }
.panel { background:var(--panel); border-radius:8px; padding:10px 14px; box-shadow:0 1px 2px rgba(0,0,0,.08); min-width:0; }
.panel.wide { grid-column: span 2; }
.panel.full { grid-column: 1 / -1; }
.panel[hidden] { display:none; }
h2 { margin:0 0 8px; font-size:15px; display:flex; gap:8px; align-items:center; }
h3 { margin:10px 0 4px; font-size:12px; text-transform:uppercase; color:var(--muted); letter-spacing:.04em; }
.badge { font-size:12px; font-weight:600; background:#e0e7ff; color:#1e3a8a; border-radius:10px; padding:1px 8px; }
.badge:empty { display:none; }
.pill { font-size:12px; border-radius:10px; padding:2px 10px; background:#374151; }
.unlock { display:flex; gap:4px; } .unlock[hidden] { display:none; } .unlock input { width:12em; }
.pill[data-state="unlocked"] { background:var(--ok); }
.pill[data-state="open"] { background:var(--ok); } .pill[data-state="closed"] { background:var(--bad); }
.note { color:var(--muted); margin:6px 0; min-height:1.2em; }
.note.bad { color:var(--bad); }
.tools { margin-left:auto; display:flex; gap:4px; align-items:center; font-weight:normal; }
.tools button { padding:1px 9px; font-size:13px; }
.zoom-level { min-width:3.5em; text-align:center; font-size:12px; color:var(--muted); }
.graph-view { overflow:auto; max-height:560px; border:1px solid #eef0f3; border-radius:6px; cursor:grab; background:#fff; }
.graph-view.dragging { cursor:grabbing; user-select:none; }
.graph-view svg { display:block; }
#graph .node.current path, #graph .node.current polygon, #graph .mode.current rect { fill:#dbeafe; stroke:var(--accent); stroke-width:3px; }
#graph .node.previous path, #graph .node.previous polygon, #graph .mode.previous rect { stroke:var(--warn); stroke-dasharray:4 3; stroke-width:2px; }
#graph .edge.last path { stroke:var(--warn); stroke-width:3px; } #graph .edge.last polygon { fill:var(--warn); stroke:var(--warn); }
#graph .edge.last text, #graph text.last { fill:var(--warn); font-weight:bold; }
.buttons { display:flex; flex-wrap:wrap; gap:6px; }
button { font:inherit; padding:4px 12px; border-radius:6px; border:1px solid #cbd5e1; background:#fff; cursor:pointer; }
button[aria-pressed="true"] { background:var(--accent); color:#fff; border-color:var(--accent); }
button:disabled { cursor:not-allowed; opacity:.55; }
form { display:flex; gap:6px; margin-top:8px; } input[type=text], input:not([type]) { flex:1; font:inherit; padding:4px 8px; border-radius:6px; border:1px solid #cbd5e1; }
.turn-stages { list-style:none; margin:0; padding:0; } .turn-stages li { display:grid; grid-template-columns:8.5em 1fr 4.5em; gap:6px; align-items:center; padding:2px 0; }
.turn-stage { color:var(--muted); font-size:12px; } .turn-ms { text-align:right; font-variant-numeric:tabular-nums; font-size:12px; }
.turn-track { background:#eef0f3; border-radius:3px; height:10px; } .turn-bar { display:block; height:10px; border-radius:3px; background:var(--accent); }
#context-form input { min-width:0; } #context-form button { flex:none; }
.voice { margin-top:6px; } #mic-button[data-state="on"] { background:var(--bad); border-color:var(--bad); color:#fff; }
.grid { display:grid; grid-template-columns:max-content 1fr; gap:2px 10px; margin:0; }
.grid dt { color:var(--muted); } .grid dd { margin:0; overflow-wrap:anywhere; }
.log { list-style:none; margin:0; padding:0; max-height:260px; overflow:auto; }
.log li { padding:3px 0; border-bottom:1px solid #eef0f3; overflow-wrap:anywhere; }
.chat { max-height:300px; min-height:120px; }
.chat li.heard .who { color:var(--ok); } .chat li.said .who { color:var(--accent); }
.chat li.said { background:#f5f8ff; }
.who { font-weight:600; margin-right:6px; }
.state { display:inline-block; min-width:70px; font-size:11px; font-weight:600; text-transform:uppercase; }
.state-queued { color:var(--muted); } .state-running { color:var(--accent); } .state-done { color:var(--ok); }
.state-failed, .state-dropped, .state-interrupted { color:var(--bad); }
.state-cancelled { color:var(--muted); }
.ok { color:var(--ok); } .bad { color:var(--bad); } .muted { color:var(--muted); }
.time { color:var(--muted); font-size:11px; margin-right:6px; }
pre { white-space:pre-wrap; overflow-wrap:anywhere; max-height:240px; overflow:auto; background:#f8fafc; padding:6px; border-radius:6px; margin:4px 0; }
.call { font-family: ui-monospace, Menlo, monospace; font-size:12px; }
#face { display:flex; justify-content:center; } #face svg { width:160px; height:160px; }
.camera { background:#111827; border-radius:6px; min-height:120px; display:flex; align-items:center; justify-content:center; overflow:hidden; }
.camera img { display:block; max-width:100%; height:auto; }
.camera img[hidden] { display:none; }
.meter { position:relative; height:14px; border-radius:7px; background:linear-gradient(90deg, #16a34a 0 70%, #eab308 70% 88%, #dc2626 88% 100%); overflow:hidden; }
.meter .rms { position:absolute; top:0; right:0; bottom:0; background:#e5e7eb; transition:left .2s; left:0; }
.meter .peak { position:absolute; top:0; bottom:0; width:2px; background:#111827; left:0; }
.stream { border-bottom:1px solid #eef0f3; padding:4px 0 6px; }
.stream .name { font-weight:600; }
.stream .facts { font-size:12px; color:var(--muted); }
.chips { display:flex; flex-wrap:wrap; gap:3px; margin-top:3px; }
.chip { font-size:10px; border-radius:8px; padding:0 6px; background:#eef2ff; color:#3730a3; }
.chip.streaming { background:#dcfce7; color:#166534; } .chip.failed { background:#fee2e2; color:#991b1b; } .chip.backingOff { background:#fef3c7; color:#92400e; }
#timeline svg { display:block; width:100%; }
#timeline .row-label { font-size:11px; fill:var(--muted); }
#timeline .bar-model { fill:var(--model); } #timeline .bar-model.failed { fill:var(--bad); }
#timeline .bar-action { fill:var(--accent); } #timeline .bar-action.failed, #timeline .bar-action.dropped, #timeline .bar-action.interrupted { fill:var(--bad); }
#timeline .bar-action.running { fill:#60a5fa; }
#timeline .axis { stroke:#e5e7eb; } #timeline .tick-label { font-size:10px; fill:var(--muted); }
.estop { display:flex; flex-wrap:wrap; align-items:center; gap:12px; padding:8px 18px; background:#fff1f2; border-bottom:2px solid var(--bad); }
.estop[data-latched="true"] { background:var(--bad); color:#fff; }
.estop-button { font-size:20px; font-weight:800; letter-spacing:.04em; padding:10px 28px; background:var(--bad); color:#fff; border:3px solid #7f1d1d; border-radius:40px; }
.estop[data-latched="true"] .estop-button { background:#7f1d1d; }
.estop-release { display:flex; gap:6px; } .estop-release[hidden] { display:none; }
.estop[data-latched="true"] .note { color:#fff; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } .panel.wide { grid-column: auto; } }
`;
