/**
 * The console's modems (`#/modems`): the caller's modems (`listModems`; an admin's: all), which event each is
 * in (`listEvents`), and from each event's status (`getEventStatus`) whether it is sending, its last punch and
 * the age of its last upload. A modem belongs to the club that first uploaded for it; an event may name any
 * serial but shows only the punches of the named modems its club holds (docs/decisions.md §5).
 */
import { fill, h } from '../dom';
import { LiveClock } from '../live/format';
import { api, problemOf, showProblem, type Schemas } from './api';
import type { ViewContext } from './context';
import { allEvents } from './events';

/** A modem is "sending" while its last upload is younger than this (the live view's default quiet threshold). */
const SENDING_MS = 5 * 60_000;

interface Seen {
  status: Schemas['ModemStatus'];
  clock: LiveClock;
}

/** Draws the modems view into `ctx.root`. */
export async function modemsView(ctx: ViewContext): Promise<void> {
  const box = h('section', { 'aria-labelledby': 'modems-title' }, h('h2', { id: 'modems-title' }, 'Modems'), h('p', { class: 'muted' }, 'Loading…'));
  fill(ctx.root, h('h1', {}, 'Modems'), box);
  const [modems, events] = await Promise.all([api().GET('/api/rest/v1/modems'), allEvents()]);
  if (!modems.data) {
    const problem = problemOf(modems.error, modems.response);
    if (problem.status === 401) return ctx.signOut(problem.detail);
    return showProblem(box, problem);
  }
  const eventList = Array.isArray(events) ? events : [];
  const inEvents = new Map<string, Schemas['Event'][]>();
  for (const e of eventList) for (const m of e.modems) inEvents.set(m, [...(inEvents.get(m) ?? []), e]);
  const mine = new Set(modems.data.map((m) => m.serial));
  // The newest status per modem over the events it is in.
  const seen = new Map<string, Seen>();
  await Promise.all(
    eventList
      .filter((e) => e.modems.some((m) => mine.has(m)))
      .map(async (e) => {
        const { data } = await api().GET('/api/rest/v1/events/{id}/status', { params: { path: { id: e.id }, query: { recent: 0 } } });
        if (!data) return;
        const clock = new LiveClock();
        clock.syncServer(data.serverTimeUtc);
        for (const s of data.modems) {
          const old = seen.get(s.serial);
          if (!old || (s.lastUploadUtc ?? 0) > (old.status.lastUploadUtc ?? 0)) seen.set(s.serial, { status: s, clock });
        }
      }),
  );
  if (modems.data.length === 0) {
    return fill(
      box,
      h('h2', { id: 'modems-title' }, 'Modems'),
      h('p', { class: 'muted' }, 'No modem yet: a modem is registered by its first upload, or by naming it in an event.'),
    );
  }
  fill(
    box,
    h('h2', { id: 'modems-title' }, 'Modems'),
    h(
      'table',
      { id: 'modem-list' },
      h('thead', {}, h('tr', {}, ...['Modem', 'State', 'Last punch', 'Last upload', 'Events', 'Club', 'Registered'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        {},
        ...modems.data.map((m) => {
          const s = seen.get(m.serial);
          const age = s?.status.lastUploadUtc == null ? null : s.clock.now() - s.status.lastUploadUtc;
          const state =
            age === null
              ? h('span', { class: 'badge none' }, 'no punches')
              : age <= SENDING_MS
                ? h('span', { class: 'badge ok' }, 'sending')
                : h('span', { class: 'badge none' }, 'silent');
          return h(
            'tr',
            { 'data-serial': m.serial, 'data-sending': String(age !== null && age <= SENDING_MS) },
            h('td', {}, m.serial),
            h('td', {}, state),
            h('td', {}, s ? s.clock.localTime(s.status.lastPunchTime) : '—'),
            h('td', {}, s ? s.clock.ago(s.status.lastUploadUtc) : '—'),
            h(
              'td',
              {},
              ...(inEvents.get(m.serial) ?? []).flatMap((e, i) => [i ? ', ' : '', h('a', { href: `#/events/${e.id}` }, `${e.name} (${e.id})`)]),
              inEvents.has(m.serial) ? '' : '—',
            ),
            h('td', {}, m.user),
            h('td', {}, new Date(m.createdAt).toLocaleString()),
          );
        }),
      ),
    ),
    h(
      'p',
      { class: 'hint' },
      'Each modem belongs to the club that first uploads for it. An event shows only the punches of the modems your club holds; the server admin can release a modem.',
    ),
  );
}
