/**
 * The live view of one event, shared by the live page (`/events/{id}/live`) and the console's event panel.
 *
 * One read of `getEventStatus` (totals, modem rows, minute buckets, the newest punches, `lastId`), then
 * `getPunchStream` from `lastId`, read with fetch (not EventSource) so that a private event's key travels in
 * the `apikey` header; after a lost connection it resumes with `Last-Event-ID` = the highest id received,
 * which the service answers without gaps or repeats. Every punch updates the totals, its modem's row, the
 * feed and the chart; a one-second tick refreshes "last minute" and the quiet warnings.
 */
import type { components } from '@sports-timing/contracts/src/generated/timing';
import { createTimingApi } from '@sports-timing/timing-client/src/api';
import { readEventStream } from '@sports-timing/timing-client/src/sse';
import { byId } from '../dom';
import { PunchChart, bump } from './chart';
import { LiveClock, dayOf, localDateTime } from './format';
import { FEED_ROWS, type LiveState } from './state';
import { renderFeed, renderModemRows, renderModemRow, sectionsHtml } from './tables';

type Punch = components['schemas']['Punch'];
type Event = components['schemas']['Event'];
type Problem = components['schemas']['Problem'];

/** Options of {@link mountLive}. */
export interface LiveOptions {
  eventId: number;
  /** The key to send ('' for none), read at each request. */
  key: () => string;
  /** The event could not be read with the key (401/403/404 and its problem): the host asks for a key. */
  onRefused: (status: number, problem: Problem | undefined) => void;
  /** The event as read (for the host's heading). */
  onEvent?: (event: Event) => void;
  /** Quiet threshold in minutes at start (the live page's `?quiet=`). */
  quietMinutes?: string;
}

/** A mounted view; `stop` ends its stream and timers. */
export interface LiveView {
  stop(): void;
}

/**
 * Renders the view's sections into `root` (the host page provides `#event-window` and `#connection`) and
 * starts reading. Returns a handle whose `stop` ends everything.
 */
export function mountLive(root: HTMLElement, opts: LiveOptions): LiveView {
  root.insertAdjacentHTML('beforeend', sectionsHtml());
  const quiet = byId<HTMLInputElement>('quiet-minutes');
  if (opts.quietMinutes) quiet.value = opts.quietMinutes;
  const clock = new LiveClock();
  const chart = new PunchChart(byId('chart'));
  const dirty = { totals: false, modems: new Set<string>(), feed: [] as number[], chart: false };
  let state: LiveState | null = null;
  let abort: AbortController | null = null;
  let renderQueued = false;
  let stopped = false;
  const sections = ['overview', 'modems-section', 'feed-section', 'chart-section'];

  const quietMs = () => (Number(quiet.value) > 0 ? Number(quiet.value) : 5) * 60_000;
  const api = () => createTimingApi({ baseUrl: location.origin, apiKey: opts.key() || undefined });
  const setConnection = (text: string, live: boolean) => {
    const el = byId('connection');
    el.textContent = text;
    el.className = live ? 'status live' : 'status';
  };
  const setNumber = (el: HTMLElement, n: number) => {
    el.dataset.value = String(n);
    el.textContent = n.toLocaleString('en-US');
  };
  const retry = (fn: () => void, ms: number) => setTimeout(() => !stopped && fn(), ms);

  function renderLastMinute(s: LiveState): void {
    const since = clock.now() - 60_000;
    s.recentUploads = s.recentUploads.filter((t) => t > since);
    setNumber(byId('last-minute'), (s.lastMinuteAt > since ? s.lastMinuteBase : 0) + s.recentUploads.length);
  }

  async function start(): Promise<void> {
    abort?.abort();
    let res;
    try {
      res = await api().GET('/api/rest/v1/events/{id}/status', {
        params: { path: { id: opts.eventId }, query: { recent: FEED_ROWS } },
        cache: 'no-store',
      });
    } catch {
      setConnection('Service unreachable; retrying…', false);
      retry(() => void start(), 2000);
      return;
    }
    const code = res.response.status;
    // A private event answers as a missing one (404) to callers without its owner's key.
    if (code === 401 || code === 403 || code === 404) {
      for (const id of sections) byId(id).hidden = true;
      setConnection('Not connected', false);
      opts.onRefused(code, res.error);
      return;
    }
    if (!res.data) {
      setConnection(`The service answered ${code}; retrying…`, false);
      retry(() => void start(), 2000);
      return;
    }
    const status = res.data;
    clock.syncServer(status.serverTimeUtc);
    clock.estimateOffset(status.recent);
    const newest = status.recent.length ? status.recent[0].time : null;
    clock.eventDay = dayOf(status.event.from ?? newest ?? clock.localNow());
    const recentUploads = status.recent.map((p) => p.receptionTimeUtc).filter((t) => t > status.serverTimeUtc - 60_000);
    const s: LiveState = {
      event: status.event,
      total: status.total,
      lastId: status.lastId,
      modems: new Map(status.modems.map((m) => [m.serial, m])),
      recentUploads,
      lastMinuteBase: Math.max(0, status.lastMinute - recentUploads.length),
      lastMinuteAt: status.serverTimeUtc,
      perMinute: new Map(),
      feed: status.recent.slice(0, FEED_ROWS),
    };
    for (const b of status.perMinute) bump(s.perMinute, b.minute, b.code, b.punches);
    state = s;
    for (const id of sections) byId(id).hidden = false;
    opts.onEvent?.(status.event);
    const finished = status.event.to !== null && clock.localNow() > status.event.to;
    byId('event-window').textContent =
      `Window ${localDateTime(status.event.from)} – ${localDateTime(status.event.to)}` +
      (finished ? ' · finished' : '') +
      (status.event.public ? ' · public' : ' · private');
    setNumber(byId('total'), s.total);
    renderLastMinute(s);
    renderModemRows(s, clock, quietMs());
    renderFeed(s, clock, null);
    chart.render(s.perMinute, true);
    void stream(s);
  }

  async function stream(s: LiveState): Promise<void> {
    const controller = new AbortController();
    abort = controller;
    try {
      const res = await api().GET('/api/rest/v1/punches/stream', {
        params: { query: { eventId: String(opts.eventId) }, header: { 'Last-Event-ID': String(s.lastId) } },
        headers: { Accept: 'text/event-stream' },
        parseAs: 'stream',
        signal: controller.signal,
        cache: 'no-store',
      });
      const code = res.response.status;
      if (code === 401 || code === 403 || code === 404) return void start();
      if (!res.response.ok || !res.response.body) throw new Error(`stream answered ${code}`);
      setConnection('Live', true);
      await readEventStream(res.response.body, (e) => e.event === 'punch' && onPunch(s, JSON.parse(e.data) as Punch), undefined, controller.signal);
    } catch {
      // A lost connection: resumed below.
    }
    if (controller.signal.aborted || stopped) return;
    setConnection('Connection lost; resuming…', false);
    retry(() => void stream(s), 1000);
  }

  function onPunch(s: LiveState, p: Punch): void {
    // A resumed stream starts after lastId; this guards a repeat all the same.
    if (p.id <= s.lastId) return;
    s.lastId = p.id;
    s.total += 1;
    s.recentUploads.push(p.receptionTimeUtc);
    const m = s.modems.get(p.modem);
    if (m) {
      m.punches += 1;
      if (!m.codes.includes(p.code)) m.codes = [...m.codes, p.code].sort((a, b) => a - b);
      m.lastPunchTime = m.lastPunchTime === null ? p.time : Math.max(m.lastPunchTime, p.time);
      m.lastUploadUtc = m.lastUploadUtc === null ? p.receptionTimeUtc : Math.max(m.lastUploadUtc, p.receptionTimeUtc);
      dirty.modems.add(p.modem);
    }
    bump(s.perMinute, p.time - (p.time % 60_000), p.code, 1);
    s.feed.unshift(p);
    if (s.feed.length > FEED_ROWS) s.feed.length = FEED_ROWS;
    dirty.feed.push(p.id);
    dirty.totals = true;
    dirty.chart = true;
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(() => {
      renderQueued = false;
      if (dirty.totals) {
        setNumber(byId('total'), s.total);
        renderLastMinute(s);
        dirty.totals = false;
      }
      for (const serial of dirty.modems) renderModemRow(s, serial, clock, quietMs());
      dirty.modems.clear();
      if (dirty.feed.length) {
        renderFeed(s, clock, new Set(dirty.feed));
        dirty.feed = [];
      }
    });
  }

  const onResize = () => chart.resize();
  const onQuiet = () => state && renderModemRows(state, clock, quietMs());
  window.addEventListener('resize', onResize);
  quiet.addEventListener('input', onQuiet);
  // Once a second: last minute, quiet warnings (time passes without punches), the chart (at most once a second).
  const tick = setInterval(() => {
    if (!state) return;
    renderLastMinute(state);
    for (const serial of state.modems.keys()) renderModemRow(state, serial, clock, quietMs());
    if (dirty.chart) {
      chart.render(state.perMinute, false);
      dirty.chart = false;
    }
  }, 1000);
  void start();
  return {
    stop() {
      stopped = true;
      abort?.abort();
      clearInterval(tick);
      window.removeEventListener('resize', onResize);
      chart.destroy();
    },
  };
}
