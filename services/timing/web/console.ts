/**
 * The organiser's console, `/console`: a club signs in with one of its API keys (kept in this tab's session
 * only, session.ts) and manages its events, modems and keys through the timing API; an admin also its users.
 * Views are chosen by the URL's fragment (`#/events`, `#/events/12`, `#/modems`, `#/keys`, `#/users`), so the
 * browser's back button and bookmarks work and the key never appears in a URL.
 */
import { api, clearProblem, problemOf, showProblem, type Schemas } from './console/api';
import type { ViewContext } from './console/context';
import { eventPanel } from './console/event-panel';
import { eventsView } from './console/events';
import { keysView } from './console/keys';
import { modemsView } from './console/modems';
import { usersView } from './console/users';
import { byId, fill, h } from './dom';
import { forgetKey, storeKey, storedKey } from './session';

const view = byId('view');
let caller: Schemas['Caller'] | null = null;
let leave: (() => void)[] = [];

function signInForm(message?: string): void {
  byId('nav').hidden = true;
  byId('who').textContent = '';
  const input = h('input', { id: 'sign-in-key', name: 'apikey', type: 'password', autocomplete: 'off', required: true });
  const form = h(
    'form',
    { id: 'sign-in', class: 'stack' },
    h('label', { for: 'sign-in-key' }, 'API key of your club (or the server admin’s)'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
    h('p', { class: 'muted' }, 'The key is kept only in this tab’s session and sent in the apikey header, never in an address.'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    storeKey(input.value.trim());
    input.value = '';
    void signIn(form);
  });
  fill(view, h('section', { 'aria-labelledby': 'sign-in-title' }, h('h1', { id: 'sign-in-title' }, 'Sign in'), form));
  if (message) showProblem(form, { title: message, status: 401, errors: { apikey: [message] }, detail: 'Not signed in.' });
  else input.focus();
}

async function signIn(form?: HTMLFormElement): Promise<void> {
  if (!storedKey()) return signInForm();
  const { data, error, response } = await api().GET('/api/rest/v1/me');
  if (!data) {
    forgetKey();
    const problem = problemOf(error, response);
    if (!form) return signInForm(problem.detail);
    signInForm();
    // The API's words beside the key field: a 401 names no field, but the key is what it refused.
    const detail = problem.detail ?? problem.title ?? `Error ${problem.status}`;
    return showProblem(byId('sign-in'), { ...problem, errors: { apikey: [detail] }, detail: 'Not signed in.' });
  }
  caller = data;
  if (form) clearProblem(form);
  byId('who').textContent = `${data.userName}${data.role === 'admin' ? ' (admin)' : ''}`;
  byId('nav-users').hidden = data.role !== 'admin';
  byId('nav').hidden = false;
  if (!location.hash || location.hash === '#') location.hash = '#/events';
  else route();
}

function route(): void {
  for (const fn of leave) fn();
  leave = [];
  if (!caller) return;
  const ctx: ViewContext = { caller, root: view, onLeave: (fn) => leave.push(fn), signOut };
  const hash = location.hash.replace(/^#\/?/, '');
  const event = /^events\/(\d{1,10})$/.exec(hash);
  for (const a of document.querySelectorAll<HTMLAnchorElement>('#nav a'))
    a.toggleAttribute('aria-current', hash.startsWith(a.getAttribute('href')!.slice(2)) && !(event && a.id !== 'nav-events'));
  fill(view);
  if (event) void eventPanel(ctx, Number(event[1]));
  else if (hash === 'modems') void modemsView(ctx);
  else if (hash === 'keys') void keysView(ctx);
  else if (hash === 'users' && caller.role === 'admin') void usersView(ctx);
  else void eventsView(ctx);
  view.focus();
}

/** Back to the sign-in form (the key was revoked under the console, or the organiser signs out). */
function signOut(message?: string): void {
  for (const fn of leave) fn();
  leave = [];
  caller = null;
  forgetKey();
  signInForm(message);
}

byId('sign-out').addEventListener('click', () => signOut());
window.addEventListener('hashchange', route);
void signIn();
