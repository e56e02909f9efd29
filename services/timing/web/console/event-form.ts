/**
 * The event form of the console (create and edit): name, public or private, the window in the event's local
 * time, the modems. Sent as `NewEvent` (`createEvent`, `putEvent`); the API's validation messages appear next
 * to the field they name.
 */
import { h } from '../dom';
import { api, clearProblem, problemOf, showProblem, type Schemas } from './api';

/** A `datetime-local` value for local wall-clock ms (the API's `from`/`to`, ms written as if UTC). */
function toInput(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().slice(0, 19);
}

/** Local wall-clock ms of a `datetime-local` value ('' → null: no bound). */
function fromInput(value: string): number | null {
  return value === '' ? null : Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`);
}

/** Serials as typed: split at commas and line breaks (a space stays part of a serial, for the API to judge). */
function serials(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function field(id: string, label: string, control: HTMLElement, hint?: HTMLElement): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint);
}

/**
 * The form; `event` null creates one. `onSaved` gets the stored event as the API answered it, with its
 * `warnings` (serials a result program cannot use: the API's rule, shown by the event panel). Who may read a
 * private event is said beside the checkbox: the owner's keys and the server's admins (`getPunches`, `listEvents`).
 */
export function eventForm(owner: string, event: Schemas['Event'] | null, onSaved: (e: Schemas['Event']) => void): HTMLFormElement {
  const p = event ? `edit-${event.id}` : 'new';
  const name = h('input', { id: `${p}-name`, name: 'name', required: true, maxlength: '200', value: event?.name ?? '' });
  const isPublic = h('input', { id: `${p}-public`, name: 'public', type: 'checkbox', checked: event?.public ?? true });
  const from = h('input', { id: `${p}-from`, name: 'from', type: 'datetime-local', step: '1', value: toInput(event?.from ?? null) });
  const to = h('input', { id: `${p}-to`, name: 'to', type: 'datetime-local', step: '1', value: toInput(event?.to ?? null) });
  const modems = h('textarea', { id: `${p}-modems`, name: 'modems', rows: '3', 'aria-describedby': `${p}-modems-hint` });
  modems.value = (event?.modems ?? []).join(', ');
  const who = h('p', { id: `${p}-public-hint`, class: 'hint' });
  const modemsHint = h('p', { id: `${p}-modems-hint`, class: 'hint' }, 'Serials separated by commas, e.g. 3000053, 3000054.');
  const sayWho = () => {
    who.textContent = isPublic.checked
      ? 'Public: anyone who knows the event id can read its punches, without a key (MeOS sends none).'
      : `Private: only ${owner}'s keys and the server's admins can read it; MeOS in SPORTident Center mode sends no key, so use a public event or the ROC address with a key.`;
  };
  sayWho();
  isPublic.addEventListener('change', sayWho);
  isPublic.setAttribute('aria-describedby', who.id);
  const form = h(
    'form',
    { class: 'stack', id: `${p}-form`, 'aria-label': event ? `Edit event ${event.id}` : 'New event', novalidate: true },
    field(name.id, 'Name', name),
    h('div', { class: 'field check' }, isPublic, h('label', { for: isPublic.id }, 'Public'), who),
    h('div', { class: 'row' }, field(from.id, 'Window from (event’s local time)', from), field(to.id, 'Window to (event’s local time)', to)),
    field(modems.id, 'Modems', modems, modemsHint),
    h('button', { type: 'submit' }, event ? 'Save' : 'Create event'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const body: Schemas['NewEvent'] = {
      name: name.value,
      public: isPublic.checked,
      modems: serials(modems.value),
      from: fromInput(from.value),
      to: fromInput(to.value),
    };
    void (async () => {
      const res = event
        ? await api().PUT('/api/rest/v1/events/{id}', { params: { path: { id: event.id } }, body })
        : await api().POST('/api/rest/v1/events', { body });
      if (!res.data) {
        return showProblem(form, problemOf(res.error, res.response));
      }
      clearProblem(form);
      onSaved(res.data);
    })();
  });
  return form;
}
