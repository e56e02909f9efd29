/**
 * One event in the console (`#/events/{id}`): its live view (live/view.ts, the live page folded in), the
 * download of its punches (CSV and JSON, every page of `getPunches` by `afterId`), the settings of each result
 * client (settings.ts) and the edit form.
 */
import { fill, h } from '../dom';
import { mountLive } from '../live/view';
import { storedKey } from '../session';
import { api, problemOf, showProblem, type Schemas } from './api';
import type { ViewContext } from './context';
import { eventForm } from './event-form';
import { settingsSection } from './settings';

/** `getPunches` answers at most this many punches per request. */
const PAGE = 1000;

/** The event's punches as one file: pages read by `afterId` until a short page (CSV: one header row). */
async function download(eventId: number, format: 'csv' | 'json'): Promise<Blob | Schemas['Problem']> {
  let afterId = 0;
  const parts: string[] = [];
  const rows: Schemas['Punch'][] = [];
  for (;;) {
    const query = { eventId: String(eventId), afterId };
    if (format === 'json') {
      const { data, error, response } = await api().GET('/api/rest/v1/punches', { params: { query }, headers: { Accept: 'application/json' } });
      if (!data || !Array.isArray(data)) return problemOf(error, response);
      rows.push(...data);
      if (data.length < PAGE) return new Blob([JSON.stringify(rows, null, 1)], { type: 'application/json' });
      afterId = data[data.length - 1].id;
    } else {
      const { data, error, response } = await api().GET('/api/rest/v1/punches', { params: { query }, headers: { Accept: 'text/csv' }, parseAs: 'text' });
      if (data === undefined) return problemOf(error, response);
      const lines = data.split(/\r?\n/).filter((l) => l !== '');
      const [header, ...body] = lines;
      if (parts.length === 0) parts.push(header);
      parts.push(...body);
      if (body.length < PAGE) return new Blob([`${parts.join('\n')}\n`], { type: 'text/csv' });
      afterId = Number(body[body.length - 1].split(',')[header.split(',').indexOf('id')]);
    }
  }
}

function downloads(event: Schemas['Event']): HTMLElement {
  const section = h('section', { 'aria-labelledby': 'downloads-title' }, h('h2', { id: 'downloads-title' }, 'Punches'));
  for (const format of ['csv', 'json'] as const) {
    const button = h('button', { type: 'button', id: `download-${format}` }, `Download ${format.toUpperCase()}`);
    button.addEventListener('click', () => {
      void (async () => {
        const file = await download(event.id, format);
        if (!(file instanceof Blob)) return showProblem(section, file);
        const a = h('a', { href: URL.createObjectURL(file), download: `event-${event.id}-punches.${format}` });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
      })();
    });
    section.append(button, ' ');
  }
  section.append(h('p', { class: 'hint' }, 'Every punch of the event’s modems inside its window, in id order, as MeOS reads them.'));
  return section;
}

/** The history state of a panel opened right after saving: the save answer's `Event.warnings`. */
export interface SavedState {
  warnings: string[];
}

/** The `warnings` of the current history entry's {@link SavedState}, or none. */
function savedWarnings(): string[] {
  const state: unknown = history.state;
  if (typeof state !== 'object' || state === null || !('warnings' in state) || !Array.isArray(state.warnings)) return [];
  return state.warnings.filter((w): w is string => typeof w === 'string');
}

/**
 * Draws the panel of event `id` into `ctx.root`, with the warnings of the save that led here, if any
 * ({@link SavedState}: `Event.warnings` of `createEvent` or `putEvent`, the API's one rule of which serials each
 * result program reads).
 */
export async function eventPanel(ctx: ViewContext, id: number): Promise<void> {
  const warnings = savedWarnings();
  const { data: event, error, response } = await api().GET('/api/rest/v1/events/{id}', { params: { path: { id } } });
  if (!event) {
    const problem = problemOf(error, response);
    if (problem.status === 401) return ctx.signOut(problem.detail);
    const box = h('section', {}, h('h1', {}, `Event ${id}`));
    fill(ctx.root, box);
    return showProblem(box, problem);
  }
  const title = h('h1', { id: 'event-name' }, event.name);
  const live = h('div', { id: 'live', class: 'live' });
  const refused = h('p', { id: 'live-refused', class: 'form-error', hidden: true, role: 'alert' });
  const edit = h(
    'details',
    { class: 'wide' },
    h('summary', {}, 'Edit the event'),
    eventForm(event.owner, event, (saved) => {
      view.stop();
      history.replaceState({ warnings: saved.warnings ?? [] } satisfies SavedState, '');
      void eventPanel(ctx, id);
    }),
  );
  fill(
    ctx.root,
    h('p', {}, h('a', { href: '#/events' }, '← Events')),
    title,
    h('p', { class: 'muted' }, `Event id ${event.id} · owner ${event.owner} · modems ${event.modems.join(', ') || '—'}`),
    h('p', { id: 'event-window', class: 'muted' }),
    warnings.length > 0 ? h('div', { id: 'event-warnings', class: 'form-error', role: 'status' }, ...warnings.map((w) => h('p', {}, w))) : undefined,
    h('p', { id: 'connection', class: 'status', role: 'status', 'aria-live': 'polite' }, 'Connecting…'),
    h('p', {}, h('a', { href: `/events/${event.id}/live`, target: '_blank', rel: 'noopener' }, 'Open the live page on its own (for a big screen)')),
    refused,
    live,
    h('div', { class: 'panels' }, downloads(event), edit),
  );
  const view = mountLive(live, {
    eventId: id,
    key: storedKey,
    onRefused(_status, problem) {
      refused.hidden = false;
      refused.textContent = problem?.detail ?? 'The event cannot be read with this key.';
    },
  });
  ctx.onLeave(() => view.stop());
  const settings = await settingsSection(event);
  // The organiser may have moved on to another view meanwhile.
  if (ctx.root.contains(live)) ctx.root.append(settings);
}
