// The WebSim e-stop bar: a big button that latches the emergency stop; releasing asks for the WebSim token.
import { h } from './panels.js';
import type { SimState } from './state.js';

type Reply = { ok: boolean; reason?: string };
type Send = (m: { type: 'estop'; reason?: string } | { type: 'estop.release'; token: string }) => Promise<Reply>;

/**
 * Puts the bar under the page header and returns its render function. The button always works (a
 * stop is never refused); the release form shows only while latched, and sends the token typed in it
 * (the server compares it with the WebSim token; the page never stores it).
 */
export function mountEstop(send: Send): (state: SimState) => void {
  const bar = h('div', 'estop');
  bar.id = 'estop';
  const button = h('button', 'estop-button', 'EMERGENCY STOP') as HTMLButtonElement;
  button.id = 'estop-button';
  button.type = 'button';
  button.title = 'stops the robot now; motion stays refused until a person releases it';
  const status = h('span', 'estop-status');
  status.id = 'estop-status';
  const form = h('form', 'estop-release') as HTMLFormElement;
  form.id = 'estop-release';
  const token = document.createElement('input');
  token.type = 'password';
  token.id = 'estop-token';
  token.placeholder = 'WebSim token';
  token.autocomplete = 'off';
  const release = h('button', null, 'Release') as HTMLButtonElement;
  release.type = 'submit';
  release.id = 'estop-release-button';
  form.append(token, release);
  const note = h('span', 'note');
  note.id = 'estop-note';
  bar.append(button, status, form, note);
  document.querySelector('header')?.after(bar);

  button.addEventListener('click', () => {
    void send({ type: 'estop' }).then((r) => (note.textContent = r.ok ? '' : `E-stop not confirmed: ${r.reason ?? 'no answer'}`));
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const typed = token.value;
    token.value = '';
    void send({ type: 'estop.release', token: typed }).then((r) => (note.textContent = r.ok ? 'Released.' : `Not released: ${r.reason ?? 'refused'}`));
  });

  return (state) => {
    const safety = state.safety ?? { estop: null, last: null };
    const e = safety.estop;
    bar.dataset.latched = String(e !== null);
    if (e) status.textContent = `LATCHED by ${e.source}: ${e.reason}. Motion is refused until a person releases it.`;
    else if (safety.last)
      status.textContent = `Motion allowed. Last safety ${safety.last.kind}${safety.last.cause ? ` (${safety.last.cause})` : ''}: ${safety.last.reason}`;
    else status.textContent = 'Motion allowed.';
    form.hidden = e === null;
  };
}
