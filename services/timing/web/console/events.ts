/**
 * The console's event list (`#/events`): the caller's events (an admin's: all), each with its window and
 * modems and a link to its panel, and the form for a new one.
 */
import { fill, h } from '../dom';
import { localDateTime } from '../live/format';
import { api, problemOf, showProblem, type Schemas } from './api';
import type { ViewContext } from './context';
import { eventForm } from './event-form';
import type { SavedState } from './event-panel';

/** Every event the caller may see (`listEvents`, paged by `afterId` until `X-Total-Count` is read). */
export async function allEvents(): Promise<Schemas['Event'][] | Schemas['Problem']> {
  const events: Schemas['Event'][] = [];
  for (;;) {
    const afterId = events.length ? events[events.length - 1].id : 0;
    const { data, error, response } = await api().GET('/api/rest/v1/events', { params: { query: { afterId } } });
    if (!data) return problemOf(error, response);
    events.push(...data);
    if (data.length === 0 || data.length >= Number(response.headers.get('X-Total-Count') ?? 0)) return events;
  }
}

/** Draws the list and the new-event form into `ctx.root`. */
export async function eventsView(ctx: ViewContext): Promise<void> {
  const list = h('div', { id: 'events-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const form = eventForm(ctx.caller.userName, null, (e) => {
    // The create answer's warnings travel with the new history entry to the panel (a later GET has none).
    history.pushState({ warnings: e.warnings ?? [] } satisfies SavedState, '', `#/events/${e.id}`);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  });
  fill(
    ctx.root,
    h('h1', {}, 'Events'),
    h('section', { 'aria-labelledby': 'events-title' }, h('h2', { id: 'events-title' }, ctx.caller.role === 'admin' ? 'All events' : 'Your events'), list),
    h('section', { 'aria-labelledby': 'new-event-title' }, h('h2', { id: 'new-event-title' }, 'New event'), form),
  );
  const events = await allEvents();
  if (!Array.isArray(events)) {
    if (events.status === 401) return ctx.signOut(events.detail);
    return showProblem(list, events);
  }
  const mine = events.filter((e) => ctx.caller.role === 'admin' || e.owner === ctx.caller.userName);
  if (mine.length === 0) return fill(list, h('p', { class: 'muted' }, 'No event yet: create one below.'));
  fill(
    list,
    h(
      'table',
      { id: 'events' },
      h('thead', {}, h('tr', {}, ...['Event', 'Id', 'Visibility', 'Window', 'Modems', 'Owner'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        {},
        ...mine.map((e) =>
          h(
            'tr',
            { 'data-id': String(e.id) },
            h('td', {}, h('a', { href: `#/events/${e.id}` }, e.name)),
            h('td', { class: 'num' }, String(e.id)),
            h('td', {}, e.public ? 'public' : 'private'),
            h('td', {}, `${localDateTime(e.from)} – ${localDateTime(e.to)}`),
            h('td', {}, e.modems.length ? e.modems.join(', ') : '—'),
            h('td', {}, e.owner),
          ),
        ),
      ),
    ),
  );
}
