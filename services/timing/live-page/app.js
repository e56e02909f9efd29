/*
 * The organiser's live page of an event (served by the timing service at /events/{id}/live).
 *
 * One read of the event status (GET /api/rest/v1/events/{id}/status: totals, modem rows, minute buckets, the
 * newest punches and lastId), then the punch stream (GET /api/rest/v1/punches/stream?eventId={id}) from
 * lastId. The stream is read with fetch, not EventSource, so that a private event's key can travel in the
 * apikey header; after a lost connection it resumes with Last-Event-ID = the highest id received, which the
 * service answers without gaps or repeats. Every punch updates the totals, its modem's row, the feed and the
 * chart; a one-second tick refreshes "last minute" and the quiet warnings against the service clock.
 */
(function () {
  'use strict';

  var FEED_ROWS = 50;
  var KEY_STORAGE = 'timing-live-apikey';
  var API = '/api/rest/v1';
  var eventId = (/^\/events\/(\d+)\/live\/?$/.exec(location.pathname) || [])[1];

  var $ = function (id) {
    return document.getElementById(id);
  };
  var state = null; // { event, total, lastId, modems: Map, recentUploads: number[], perMinute: Map, feed: [] }
  var clockOffset = 0; // service clock − browser clock (ms)
  var streamAbort = null;
  var dirty = { totals: false, modems: new Set(), feed: [], chart: false };
  var chart = null;

  var params = new URLSearchParams(location.search);
  if (params.get('quiet')) $('quiet-minutes').value = params.get('quiet');

  function key() {
    return sessionStorage.getItem(KEY_STORAGE) || '';
  }
  function headers(extra) {
    var h = extra || {};
    if (key()) h.apikey = key();
    return h;
  }
  function now() {
    return Date.now() + clockOffset;
  }
  /**
   * One time format for the whole page, in the organiser's locale (the browser's language): the same
   * hour:minute:second shape everywhere, with the date in front only where the day is not the event's day.
   * Punch times are the event's local wall clock (ms written as if UTC), so they are formatted in UTC;
   * upload instants (UTC) are moved into the event's time zone by its offset (eventOffset, below).
   */
  var TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', timeZone: 'UTC' });
  var DATE = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
  /**
   * The event's offset from UTC (ms): a punch's local `time` minus its `receptionTimeUtc` is that offset less
   * the radio delay of a few seconds, so the median of the newest punches rounded to a quarter hour gives it.
   * Without punches, or when times are not of the reception day (a replay of an old file), the browser's own
   * offset (the organiser's, normally the event's zone).
   */
  var eventOffset = -new Date().getTimezoneOffset() * 60000;
  function estimateOffset(punches) {
    var diffs = punches
      .map(function (p) {
        return p.time - p.receptionTimeUtc;
      })
      .sort(function (a, b) {
        return a - b;
      });
    if (!diffs.length) return;
    var q = 15 * 60000;
    var median = Math.round(diffs[Math.floor(diffs.length / 2)] / q) * q;
    if (Math.abs(median) <= 14 * 3600000) eventOffset = median;
  }
  function dayOf(localMs) {
    return Math.floor(localMs / 86400000);
  }
  /** The event's day (local), for "is this another day" (the window's start, else the newest punch). */
  var eventDay = null;
  /** A local wall-clock time (ms written as if UTC, as the API's `time`), the date added when not the event's day. */
  function localTime(ms) {
    if (ms === null || ms === undefined) return '—';
    return (eventDay !== null && dayOf(ms) !== eventDay ? DATE.format(ms) + ' ' : '') + TIME.format(ms);
  }
  function localDateTime(ms) {
    if (ms === null || ms === undefined) return 'open';
    return DATE.format(ms) + ' ' + TIME.format(ms);
  }
  /** A UTC instant in the event's time zone, in the page's one format. */
  function instant(ms) {
    if (ms === null || ms === undefined) return '—';
    return localTime(ms + eventOffset);
  }
  /** A span of time for the quiet warning, in whole minutes (under one: "<1 min"); at most 12 h (see IDLE_MS). */
  function duration(ms) {
    var min = Math.floor(ms / 60000);
    if (min < 1) return '<1 min';
    if (min < 120) return min + ' min';
    return Math.floor(min / 60) + ' h';
  }
  /**
   * A modem silent longer than this is not "quiet" but idle: its event is over (or has not begun), and a
   * warning counting days would only alarm. The row says since when it is idle instead.
   */
  var IDLE_MS = 12 * 3600000;
  /** When a UTC instant was, from the service clock: "12 s ago" within the hour, else its time in the event's zone. */
  function ago(ms) {
    if (ms === null || ms === undefined) return '—';
    var s = Math.max(0, Math.round((now() - ms) / 1000));
    if (s < 60) return s + ' s ago';
    if (s < 3600) return Math.floor(s / 60) + ' min ago';
    return instant(ms);
  }
  function setConnection(text, live) {
    var el = $('connection');
    el.textContent = text;
    el.className = live ? 'status live' : 'status';
  }
  function setNumber(el, n) {
    el.dataset.value = String(n);
    el.textContent = n.toLocaleString('en-US');
  }

  function showKeyForm(message) {
    $('key-form-section').hidden = false;
    $('key-message').textContent = message;
    ['overview', 'modems-section', 'feed-section', 'chart-section'].forEach(function (id) {
      $(id).hidden = true;
    });
    setConnection('Not connected', false);
    $('api-key').focus();
  }

  $('key-form').addEventListener('submit', function (e) {
    e.preventDefault();
    sessionStorage.setItem(KEY_STORAGE, $('api-key').value.trim());
    $('api-key').value = '';
    start();
  });
  $('quiet-minutes').addEventListener('input', function () {
    renderAllModems();
  });

  async function start() {
    if (!eventId) {
      showKeyForm('This address names no event.');
      return;
    }
    if (streamAbort) streamAbort.abort();
    var res;
    try {
      res = await fetch(API + '/events/' + eventId + '/status?recent=' + FEED_ROWS, { headers: headers({ Accept: 'application/json' }), cache: 'no-store' });
    } catch (err) {
      setConnection('Service unreachable; retrying…', false);
      setTimeout(start, 2000);
      return;
    }
    // A private event answers as a missing one (404) to callers without its owner's key: offer the key form.
    if (res.status === 401 || res.status === 403 || res.status === 404) {
      var problem = await res.json().catch(function () {
        return {};
      });
      var hadKey = !!key();
      if (res.status === 403 || hadKey) sessionStorage.removeItem(KEY_STORAGE);
      var hint =
        res.status === 404
          ? hadKey
            ? ' If it is private, the key does not give access to it.'
            : ''
          : res.status === 403
            ? ' The key does not give access to it.'
            : ' Enter an API key.';
      showKeyForm((problem.detail || 'There is no event ' + eventId + ' visible without a key.') + hint);
      return;
    }
    if (!res.ok) {
      setConnection('The service answered ' + res.status + '; retrying…', false);
      setTimeout(start, 2000);
      return;
    }
    var status = await res.json();
    clockOffset = status.serverTimeUtc - Date.now();
    estimateOffset(status.recent);
    var newest = status.recent.length ? status.recent[0].time : null;
    eventDay = status.event.from !== null ? dayOf(status.event.from) : newest !== null ? dayOf(newest) : dayOf(now() + eventOffset);
    state = {
      event: status.event,
      total: status.total,
      lastId: status.lastId,
      modems: new Map(
        status.modems.map(function (m) {
          return [m.serial, m];
        }),
      ),
      // Reception times of the last minute: those among the newest punches read; any older rest of the
      // service's lastMinute count (a busy minute has more than the page reads) is kept until it has aged out.
      recentUploads: status.recent
        .map(function (p) {
          return p.receptionTimeUtc;
        })
        .filter(function (t) {
          return t > status.serverTimeUtc - 60000;
        }),
      perMinute: new Map(),
      feed: status.recent.slice(0, FEED_ROWS),
      lastMinuteAt: status.serverTimeUtc,
    };
    state.lastMinuteBase = Math.max(0, status.lastMinute - state.recentUploads.length);
    status.perMinute.forEach(function (b) {
      bump(state.perMinute, b.minute, b.code, b.punches);
    });
    $('key-form-section').hidden = true;
    ['overview', 'modems-section', 'feed-section', 'chart-section'].forEach(function (id) {
      $(id).hidden = false;
    });
    document.title = 'Live — ' + status.event.name;
    $('event-name').textContent = status.event.name;
    // Finished: the window's end (the event's local wall clock) has passed.
    var finished = status.event.to !== null && now() + eventOffset > status.event.to;
    $('event-window').textContent =
      'Window ' +
      localDateTime(status.event.from) +
      ' – ' +
      localDateTime(status.event.to) +
      (finished ? ' · finished' : '') +
      (status.event.public ? ' · public' : ' · private');
    setNumber($('total'), state.total);
    renderLastMinute();
    renderAllModems();
    renderFeed(true);
    renderChart(true);
    stream();
  }

  function bump(map, minute, code, n) {
    var codes = map.get(minute);
    if (!codes) {
      codes = new Map();
      map.set(minute, codes);
    }
    codes.set(code, (codes.get(code) || 0) + n);
  }

  /** Follows the punch stream from state.lastId; reconnects with Last-Event-ID after any loss. */
  async function stream() {
    var controller = new AbortController();
    streamAbort = controller;
    try {
      var res = await fetch(API + '/punches/stream?eventId=' + eventId, {
        headers: headers({ Accept: 'text/event-stream', 'Last-Event-ID': String(state.lastId) }),
        signal: controller.signal,
        cache: 'no-store',
      });
      if (res.status === 401 || res.status === 403 || res.status === 404) {
        start();
        return;
      }
      if (!res.ok || !res.body) throw new Error('stream answered ' + res.status);
      setConnection('Live', true);
      var reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      var buffer = '';
      for (;;) {
        var chunk = await reader.read();
        if (chunk.done) break;
        buffer += chunk.value;
        var end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          var block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          var data = block
            .split('\n')
            .filter(function (l) {
              return l.indexOf('data:') === 0;
            })
            .map(function (l) {
              return l.slice(5).trim();
            })
            .join('\n');
          if (data) onPunch(JSON.parse(data));
        }
      }
    } catch (err) {
      if (controller.signal.aborted) return;
    }
    if (controller.signal.aborted) return;
    setConnection('Connection lost; resuming…', false);
    setTimeout(stream, 1000);
  }

  function onPunch(p) {
    // Guard against a repeat, should a resumed stream ever overlap what was shown.
    if (p.id <= state.lastId) return;
    state.lastId = p.id;
    state.total += 1;
    state.recentUploads.push(p.receptionTimeUtc);
    var m = state.modems.get(p.modem);
    if (m) {
      m.punches += 1;
      if (m.codes.indexOf(p.code) < 0)
        m.codes = m.codes.concat([p.code]).sort(function (a, b) {
          return a - b;
        });
      m.lastPunchTime = m.lastPunchTime === null ? p.time : Math.max(m.lastPunchTime, p.time);
      m.lastUploadUtc = m.lastUploadUtc === null ? p.receptionTimeUtc : Math.max(m.lastUploadUtc, p.receptionTimeUtc);
      dirty.modems.add(p.modem);
    }
    bump(state.perMinute, p.time - (p.time % 60000), p.code, 1);
    state.feed.unshift(p);
    if (state.feed.length > FEED_ROWS) state.feed.length = FEED_ROWS;
    dirty.feed.push(p.id);
    dirty.totals = true;
    dirty.chart = true;
    scheduleRender();
  }

  var renderQueued = false;
  function scheduleRender() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(function () {
      renderQueued = false;
      if (dirty.totals) {
        setNumber($('total'), state.total);
        renderLastMinute();
        dirty.totals = false;
      }
      dirty.modems.forEach(renderModem);
      dirty.modems.clear();
      if (dirty.feed.length) {
        renderFeed(false);
        dirty.feed = [];
      }
    });
  }

  function renderLastMinute() {
    var since = now() - 60000;
    state.recentUploads = state.recentUploads.filter(function (t) {
      return t > since;
    });
    var base = state.lastMinuteAt > since ? state.lastMinuteBase : 0;
    setNumber($('last-minute'), base + state.recentUploads.length);
  }

  function quietMs() {
    var minutes = Number($('quiet-minutes').value);
    return (minutes > 0 ? minutes : 5) * 60000;
  }

  function modemCells(m) {
    var tr = document.createElement('tr');
    tr.dataset.serial = m.serial;
    return tr;
  }

  function fillModemRow(tr, m) {
    var silentFor = m.lastUploadUtc === null ? null : now() - m.lastUploadUtc;
    var idle = silentFor !== null && silentFor > IDLE_MS;
    var quiet = !idle && silentFor !== null && silentFor > quietMs();
    tr.className = quiet ? 'quiet' : '';
    tr.dataset.quiet = String(quiet);
    var stateCell =
      m.lastUploadUtc === null
        ? '<span class="badge none">no punches</span>'
        : idle
          ? '<span class="badge none">idle</span>'
          : quiet
            ? '<span class="badge quiet">quiet for ' + duration(silentFor) + '</span>'
            : '<span class="badge ok">sending</span>';
    tr.innerHTML = '';
    // The state comes second, so that it stays in view on a phone.
    [m.serial, null, m.punches.toLocaleString('en-US'), localTime(m.lastPunchTime), ago(m.lastUploadUtc), m.codes.join(', ') || '—'].forEach(
      function (text, i) {
        var td = document.createElement('td');
        if (text === null) td.innerHTML = stateCell;
        else td.textContent = text;
        if (i === 2) {
          td.className = 'num';
          td.dataset.value = String(m.punches);
        }
        tr.appendChild(td);
      },
    );
  }

  function renderAllModems() {
    if (!state) return;
    var body = $('modems').tBodies[0];
    body.innerHTML = '';
    state.modems.forEach(function (m) {
      var tr = modemCells(m);
      fillModemRow(tr, m);
      body.appendChild(tr);
    });
  }

  function renderModem(serial) {
    var m = state.modems.get(serial);
    var tr = $('modems').querySelector('tr[data-serial="' + CSS.escape(serial) + '"]');
    if (m && tr) fillModemRow(tr, m);
  }

  function feedRow(p, fresh) {
    var tr = document.createElement('tr');
    tr.dataset.id = String(p.id);
    if (fresh) tr.className = 'new';
    [p.id, p.card, p.code, p.type, localTime(p.time), p.modem].forEach(function (v, i) {
      var td = document.createElement('td');
      td.textContent = String(v);
      if (i < 3) td.className = 'num';
      tr.appendChild(td);
    });
    return tr;
  }

  function renderFeed(all) {
    var body = $('feed').tBodies[0];
    if (all) {
      body.innerHTML = '';
      state.feed.forEach(function (p) {
        body.appendChild(feedRow(p, false));
      });
      return;
    }
    var fresh = new Set(dirty.feed);
    // New punches are at the front of state.feed, newest first.
    var rows = state.feed.filter(function (p) {
      return fresh.has(p.id);
    });
    for (var i = rows.length - 1; i >= 0; i--) body.insertBefore(feedRow(rows[i], true), body.firstChild);
    while (body.rows.length > FEED_ROWS) body.deleteRow(body.rows.length - 1);
  }

  var PALETTE = ['#0b5cad', '#c0392b', '#1f7a3a', '#8e44ad', '#d35400', '#16a085', '#2c3e50', '#b7950b', '#7f8c8d', '#e84393'];

  /**
   * Chart data: every minute from the first to the last (a minute without punches of a control is 0, and
   * a quiet hour a flat line, not a slope), one series per control code; and the range that holds the
   * middle of the punches (2 % cut at the start, 0.5 % at the end), so that a few stray times (result-list artefacts at 00:00) do not squeeze
   * the race into a corner. Drag to zoom, double-click to see everything.
   */
  function chartData() {
    var keys = Array.from(state.perMinute.keys()).sort(function (a, b) {
      return a - b;
    });
    var codes = new Set();
    var total = 0;
    state.perMinute.forEach(function (byCode) {
      byCode.forEach(function (n, code) {
        codes.add(code);
        total += n;
      });
    });
    var codeList = Array.from(codes).sort(function (a, b) {
      return a - b;
    });
    var minutes = [];
    if (keys.length) for (var m = keys[0]; m <= keys[keys.length - 1]; m += 60000) minutes.push(m);
    var data = [
      minutes.map(function (x) {
        return x / 1000;
      }),
    ];
    codeList.forEach(function (code) {
      data.push(
        minutes.map(function (x) {
          var byCode = state.perMinute.get(x);
          return (byCode && byCode.get(code)) || 0;
        }),
      );
    });
    var seen = 0,
      lo = keys[0],
      hi = keys[keys.length - 1];
    var loFound = false;
    keys.forEach(function (k) {
      var n = 0;
      state.perMinute.get(k).forEach(function (v) {
        n += v;
      });
      seen += n;
      if (!loFound && seen >= total * 0.02) {
        lo = k;
        loFound = true;
      }
      if (seen <= total * 0.995) hi = k;
    });
    return { codes: codeList, data: data, range: keys.length ? [lo / 1000 - 300, hi / 1000 + 300] : null };
  }

  function renderChart(rebuild) {
    var el = $('chart');
    var d = chartData();
    var width = Math.max(280, el.clientWidth || 600);
    // Live updates keep the scales, so a zoom the organiser chose stays.
    if (!rebuild && chart && chart.series.length === d.codes.length + 1) {
      chart.setData(d.data, false);
      return;
    }
    if (chart) chart.destroy();
    chart = new uPlot(
      {
        width: width,
        height: 300,
        // The API's `time` is local wall-clock written as if UTC: show it as such.
        tzDate: function (ts) {
          return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');
        },
        series: [{ label: 'Minute' }].concat(
          d.codes.map(function (code, i) {
            return { label: 'Code ' + code, stroke: PALETTE[i % PALETTE.length], width: 1.5, points: { show: false } };
          }),
        ),
        axes: [{}, { label: 'Punches / min' }],
        legend: { live: false },
      },
      d.data,
      el,
    );
    if (d.range) chart.setScale('x', { min: d.range[0], max: d.range[1] });
  }

  window.addEventListener('resize', function () {
    if (chart) chart.setSize({ width: Math.max(280, $('chart').clientWidth), height: 300 });
  });

  // Once a second: last minute, quiet warnings (time passes without punches), the chart (at most once a second).
  setInterval(function () {
    if (!state) return;
    renderLastMinute();
    state.modems.forEach(function (m) {
      renderModem(m.serial);
    });
    if (dirty.chart) {
      renderChart(false);
      dirty.chart = false;
    }
  }, 1000);

  start();
})();
