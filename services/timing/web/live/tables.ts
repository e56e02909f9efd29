/**
 * The live view's markup and its two tables: one row per modem (its state second, so that it stays in view
 * on a phone) and the feed of the newest punches.
 */
import { h } from '../dom';
import type { LiveClock } from './format';
import { duration } from './format';
import { FEED_ROWS, type LiveState } from './state';

/**
 * A modem silent longer than this is not "quiet" but idle: its event is over (or has not begun), and a warning
 * counting days would only alarm. The row says since when it is idle instead.
 */
const IDLE_MS = 12 * 3_600_000;

/** The view's sections (static markup, no data), hidden until the event is read. */
export function sectionsHtml(): string {
  const th = (labels: string[], num: number[]) => labels.map((l, i) => `<th scope="col"${num.includes(i) ? ' class="num"' : ''}>${l}</th>`).join('');
  return `
  <section id="overview" hidden aria-label="Totals">
    <div class="tile"><span class="label">Punches</span><span id="total" class="value" data-value="0">0</span></div>
    <div class="tile"><span class="label">Last minute</span><span id="last-minute" class="value" data-value="0">0</span></div>
    <div class="tile">
      <label class="label" for="quiet-minutes">Quiet after (min)</label>
      <input id="quiet-minutes" type="number" min="0.1" step="0.1" value="5">
    </div>
  </section>
  <section id="modems-section" hidden aria-labelledby="modems-title">
    <h2 id="modems-title">Modems</h2>
    <div class="scroll"><table id="modems"><thead><tr>${th(['Modem', 'State', 'Punches', 'Last punch', 'Last upload', 'Codes'], [2])}</tr></thead><tbody></tbody></table></div>
  </section>
  <section id="feed-section" hidden aria-labelledby="feed-title">
    <h2 id="feed-title">Newest punches</h2>
    <div class="scroll"><table id="feed"><thead><tr>${th(['Id', 'Card', 'Code', 'Type', 'Time', 'Modem'], [0, 1, 2])}</tr></thead><tbody></tbody></table></div>
  </section>
  <section id="chart-section" hidden aria-labelledby="chart-title">
    <h2 id="chart-title">Punches per minute and control</h2>
    <div id="chart"></div>
  </section>`;
}

function modemsBody(): HTMLTableSectionElement {
  return (document.getElementById('modems') as HTMLTableElement).tBodies[0];
}

function fillModemRow(tr: HTMLTableRowElement, s: LiveState, serial: string, clock: LiveClock, quietMs: number): void {
  const m = s.modems.get(serial)!;
  const silentFor = m.lastUploadUtc === null ? null : clock.now() - m.lastUploadUtc;
  const idle = silentFor !== null && silentFor > IDLE_MS;
  const quiet = !idle && silentFor !== null && silentFor > quietMs;
  tr.className = quiet ? 'quiet' : '';
  tr.dataset.quiet = String(quiet);
  const badge =
    silentFor === null
      ? h('span', { class: 'badge none' }, 'no punches')
      : idle
        ? h('span', { class: 'badge none' }, 'idle')
        : quiet
          ? h('span', { class: 'badge quiet' }, `quiet for ${duration(silentFor)}`)
          : h('span', { class: 'badge ok' }, 'sending');
  const punches = h('td', { class: 'num' }, m.punches.toLocaleString('en-US'));
  punches.dataset.value = String(m.punches);
  tr.replaceChildren(
    h('td', {}, m.serial),
    h('td', {}, badge),
    punches,
    h('td', {}, clock.localTime(m.lastPunchTime)),
    h('td', {}, clock.ago(m.lastUploadUtc)),
    h('td', {}, m.codes.join(', ') || '—'),
  );
}

/** Redraws every modem row (after the status read, or a new quiet threshold). */
export function renderModemRows(s: LiveState, clock: LiveClock, quietMs: number): void {
  const body = modemsBody();
  body.replaceChildren();
  for (const serial of s.modems.keys()) {
    const tr = h('tr');
    tr.dataset.serial = serial;
    fillModemRow(tr, s, serial, clock, quietMs);
    body.append(tr);
  }
}

/** Redraws the row of one modem. */
export function renderModemRow(s: LiveState, serial: string, clock: LiveClock, quietMs: number): void {
  const tr = modemsBody().querySelector<HTMLTableRowElement>(`tr[data-serial="${CSS.escape(serial)}"]`);
  if (tr && s.modems.has(serial)) fillModemRow(tr, s, serial, clock, quietMs);
}

function feedRow(p: LiveState['feed'][number], clock: LiveClock, fresh: boolean): HTMLTableRowElement {
  const num = { class: 'num' };
  const tr = h(
    'tr',
    fresh ? { class: 'new' } : {},
    h('td', num, String(p.id)),
    h('td', num, p.card),
    h('td', num, String(p.code)),
    h('td', {}, p.type),
    h('td', {}, clock.localTime(p.time)),
    h('td', {}, p.modem),
  );
  tr.dataset.id = String(p.id);
  return tr;
}

/** The feed: all of it (`fresh` null) or the new punches of `fresh` (ids) put on top, newest first. */
export function renderFeed(s: LiveState, clock: LiveClock, fresh: Set<number> | null): void {
  const body = (document.getElementById('feed') as HTMLTableElement).tBodies[0];
  if (fresh === null) {
    body.replaceChildren(...s.feed.map((p) => feedRow(p, clock, false)));
    return;
  }
  const rows = s.feed.filter((p) => fresh.has(p.id));
  for (let i = rows.length - 1; i >= 0; i--) body.insertBefore(feedRow(rows[i], clock, true), body.firstChild);
  while (body.rows.length > FEED_ROWS) body.deleteRow(body.rows.length - 1);
}
