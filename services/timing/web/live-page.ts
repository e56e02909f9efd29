/**
 * The organiser's live page, `/events/{id}/live`: the live view (live/view.ts) of the event in the path, and
 * a key form when the event cannot be read without one (a private event answers as a missing one). The key
 * is kept in this tab's session only (session.ts).
 */
import { byId } from './dom';
import { mountLive } from './live/view';
import { forgetKey, storeKey, storedKey } from './session';

const eventId = Number((/^\/events\/(\d+)\/live\/?$/.exec(location.pathname) ?? [])[1] ?? 0);
const form = byId<HTMLFormElement>('key-form');
const input = byId<HTMLInputElement>('api-key');
let view: { stop(): void } | null = null;

function showKeyForm(message: string): void {
  byId('key-form-section').hidden = false;
  byId('key-message').textContent = message;
  input.focus();
}

function open(): void {
  view?.stop();
  document.querySelectorAll('#live > section:not(#key-form-section)').forEach((s) => s.remove());
  if (!eventId) return showKeyForm('This address names no event.');
  view = mountLive(byId('live'), {
    eventId,
    key: storedKey,
    quietMinutes: new URLSearchParams(location.search).get('quiet') ?? undefined,
    onEvent(event) {
      byId('key-form-section').hidden = true;
      document.title = `Live — ${event.name}`;
      byId('event-name').textContent = event.name;
    },
    onRefused(status, problem) {
      const hadKey = storedKey() !== '';
      if (status === 403 || hadKey) forgetKey();
      const hint =
        status === 404
          ? hadKey
            ? ' If it is private, the key does not give access to it.'
            : ''
          : status === 403
            ? ' The key does not give access to it.'
            : ' Enter an API key.';
      showKeyForm((problem?.detail ?? `There is no event ${eventId} visible without a key.`) + hint);
    },
  });
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  storeKey(input.value.trim());
  input.value = '';
  open();
});
open();
