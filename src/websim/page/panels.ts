// The text panels of the page (conversation, inputs, counters, model answer, actions, hooks, errors), filled with textContent only.
import type { SimState } from './state.js';
import { shownValue } from './show.js';

type Child = Node | string;

/** Creates an element with a class and children; strings become text nodes, never markup. */
export function h(tag: string, cls: string | null, ...children: Child[]): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  e.append(...children);
  return e;
}

const time = (at: number) => h('span', 'time', new Date(at).toLocaleTimeString());

/** Short JSON of a value for one line (action values, tool-call arguments). */
export function brief(value: unknown, max = 200): string {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** An action value as a person reads it: the sentence of speak, the emotion of face; JSON otherwise. */
export function actionText(value: unknown): string {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1 && typeof entries[0]![1] === 'string') return brief(entries[0]![1]);
  }
  return brief(value);
}

function pairs(list: HTMLElement, entries: Array<[string, Child[]]>, empty: string): void {
  if (entries.length === 0) {
    list.replaceChildren(h('dt', null, '—'), h('dd', 'note', empty));
    return;
  }
  list.replaceChildren(...entries.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, ...v)]));
}

export function renderInputs(list: HTMLElement, s: SimState): void {
  const entries = Object.entries(s.inputs).map(([name, i]): [string, Child[]] => [name, [time(i.at), i.text]]);
  pairs(list, entries, 'no input yet');
}

/** The last voice turn: each stage after the turn's origin as a bar on one scale, with its ms. */
export function renderTurn(panel: HTMLElement, box: HTMLElement, s: SimState): void {
  const turn = s.turn;
  panel.hidden = turn === null;
  if (!turn) return;
  const longest = Math.max(1, ...turn.stages.map(([, ms]) => ms));
  const head = h(
    'p',
    'note',
    time(turn.at),
    `${turn.outcome} · ${turn.streamed ? 'streamed' : 'not streamed'} · ${turn.spoken} of ${turn.sentences} sentences · from ${turn.origin.replaceAll('_', ' ')}`,
  );
  const rows = turn.stages.map(([stage, ms]) => {
    const bar = h('span', 'turn-bar');
    bar.style.width = `${Math.round((ms / longest) * 100)}%`;
    return h('li', null, h('span', 'turn-stage', stage.replaceAll('_', ' ')), h('span', 'turn-track', bar), h('span', 'turn-ms', `${Math.round(ms)} ms`));
  });
  box.replaceChildren(head, h('ol', 'turn-stages', ...rows));
}

/** Context values for `context_aware` rules: each name, its value, who set it and when. */
export function renderContext(list: HTMLElement, s: SimState): void {
  const entries = Object.entries(s.context)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, c]): [string, Child[]] => [name, [time(c.at), `${shownValue(name, c.value)} (${c.source})`]]);
  pairs(list, entries, 'none set yet');
}

/** What was heard and said, oldest first, scrolled to the newest line. */
export function renderTranscript(list: HTMLElement, s: SimState): void {
  if (s.transcript.length === 0) {
    list.replaceChildren(h('li', 'note', 'nothing heard or said yet'));
    return;
  }
  list.replaceChildren(
    ...s.transcript.map((l) => {
      const li = h('li', l.who, time(l.at), h('span', 'who', l.who === 'heard' ? `heard (${l.source})` : 'said'), l.text);
      li.dataset.who = l.who;
      return li;
    }),
  );
  list.scrollTop = list.scrollHeight;
}

export function renderCounters(list: HTMLElement, s: SimState): void {
  const c = s.counters;
  pairs(
    list,
    [
      ['ticks', [String(c.ticks)]],
      ['late ticks', [String(c.late_ticks), h('span', 'note', ' skipped: the tick before ran past its slot (1/hertz), usually a slow model answer')]],
      ['model calls', [String(c.model_calls)]],
      ['model errors', [String(c.model_errors)]],
      ['CU spent', [c.cu_spent.toLocaleString('en', { maximumFractionDigits: 2 })]],
      ['CU speech', [c.cu_speech.toLocaleString('en', { maximumFractionDigits: 2 })]],
      ['CU recognition', [c.cu_recognition.toLocaleString('en', { maximumFractionDigits: 2 })]],
    ],
    '',
  );
}

export function renderAnswer(box: HTMLElement, latency: HTMLElement, prompt: HTMLElement, s: SimState): void {
  prompt.textContent = s.prompt ? s.prompt.text : '(no prompt yet)';
  const a = s.answer;
  latency.textContent = a ? `${a.latency_ms} ms${a.cost_cu !== undefined ? ` · ${a.cost_cu} CU` : ''}` : '';
  const parts: HTMLElement[] = [];
  if (a) {
    parts.push(h('div', 'note', time(a.at), `tick ${a.tick} · ${a.mode} · ${a.model}`));
    if (a.text) parts.push(h('p', 'answer-text', a.text));
    const calls = h('ul', 'calls');
    for (const call of a.tool_calls) calls.append(h('li', 'call', `${call.name}(${brief(call.arguments, 400)})`));
    if (a.tool_calls.length === 0) calls.append(h('li', 'note', 'no tool calls'));
    parts.push(calls);
  } else {
    parts.push(h('p', 'note', 'no model answer yet'));
  }
  if (s.modelError && (!a || s.modelError.at >= a.at)) parts.push(h('p', 'bad', time(s.modelError.at), `model error: ${s.modelError.error}`));
  const mh = s.modelHealth;
  if (mh && mh.state !== 'healthy') {
    const what = mh.state === 'failing' ? 'keeps failing (motion paused)' : 'streams cannot be read: answers are asked whole';
    parts.push(
      h('p', mh.state === 'failing' ? 'bad model-health' : 'note model-health', time(mh.at), `${mh.model} ${what}${mh.reason ? `: ${mh.reason}` : ''}`),
    );
  }
  box.replaceChildren(...parts);
}

/** What the last turn was given from the knowledge base and the memory: source, score, the start of the text. */
export function renderRecall(list: HTMLElement, s: SimState): void {
  const r = s.recall;
  if (!r) return list.replaceChildren(h('li', 'note', 'nothing recalled yet'));
  const items = r.used.map((u) => {
    const li = h(
      'li',
      null,
      h('span', 'badge', u.score.toFixed(2)),
      ` ${u.kind === 'knowledge' ? u.source : `${u.kind}${u.person ? ` of ${u.person}` : ''} (${u.source})`} `,
      h('span', 'note', brief(u.text, 160)),
    );
    li.dataset.kind = u.kind;
    li.dataset.source = u.source;
    return li;
  });
  if (r.note) items.unshift(h('li', 'note', r.note.replace(/^MEMORY: /, '')));
  if (items.length === 0) items.push(h('li', 'note', `tick ${r.tick}: no passage or memory fits "${brief(r.query, 80)}"`));
  list.replaceChildren(...items);
}

export function renderActions(list: HTMLElement, s: SimState): void {
  if (s.actions.length === 0) return list.replaceChildren(h('li', 'note', 'no action yet'));
  list.replaceChildren(
    ...s.actions.map((a) => {
      const li = h('li', null, time(a.at), h('span', `state state-${a.state}`, a.state), `${a.label} `, h('span', 'call', actionText(a.value)));
      li.dataset.label = a.label;
      li.dataset.state = a.state;
      if (a.error) li.append(h('div', 'bad', a.error));
      return li;
    }),
  );
}

export function renderHooks(list: HTMLElement, s: SimState): void {
  if (s.hooks.length === 0) return list.replaceChildren(h('li', 'note', 'no hook run yet'));
  list.replaceChildren(
    ...s.hooks.map((k) => {
      // A hook cut short by a mode switch or a stop was cancelled, not failed.
      const mark = k.cancelled ? h('span', 'muted', '⊘ cancelled ') : h('span', k.ok ? 'ok' : 'bad', k.ok ? '✓ ' : '✗ ');
      const li = h(
        'li',
        null,
        time(k.at),
        mark,
        `${k.hook_type} · ${k.handler_type} · ${k.mode}${k.duration_ms !== undefined ? ` · ${k.duration_ms} ms` : ''}`,
        ...(k.error ? [h('div', k.cancelled ? 'muted' : 'bad', k.error)] : []),
      );
      li.dataset.outcome = k.cancelled ? 'cancelled' : k.ok ? 'ok' : 'failed';
      return li;
    }),
  );
}

export function renderErrors(list: HTMLElement, s: SimState): void {
  if (s.errors.length === 0) return list.replaceChildren(h('li', 'note', 'none'));
  list.replaceChildren(
    ...s.errors.map((e) =>
      h(
        'li',
        'bad',
        time(e.at),
        `${e.source}: ${e.message}`,
        e.repeats ? ` (and ${e.repeats} more like it since ${new Date(e.first ?? e.at).toLocaleTimeString()})` : '',
      ),
    ),
  );
}
