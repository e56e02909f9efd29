/**
 * The settings of each real client for one event, ready to copy (README "Your own event", docs/roc.md): MeOS
 * in SPORTident Center mode and in ROC mode, SIRAPimport, RadioSender, a ROC unit's upload address. The
 * server's address is the one this browser reached it by (from the request's Host or forwarded headers,
 * `/console/server.json`), and a LAN address when that was the loopback one. Where a client needs a key, the
 * organiser makes one for that device here (`createKey`, shown once).
 */
import { fill, h } from '../dom';
import { api, copyButton, problemOf, showProblem, type Schemas } from './api';

interface ClientSetting {
  id: string;
  client: string;
  where: string;
  /** The text to copy for key `key` ('' while none was made). */
  text: (key: string) => string;
  needsKey: boolean;
  note?: string;
}

function settingsOf(origin: string, event: Schemas['Event']): ClientSetting[] {
  const id = event.id;
  const serials = event.modems.join(',');
  const k = (key: string) => key || '<API key>';
  const roc = (key: string) => (event.public && !key ? `${origin}/getpunches.asp` : `${origin}/roc/key/${k(key)}/getpunches.asp`);
  return [
    {
      id: 'meos-center',
      client: 'MeOS — SPORTident Center',
      where: 'Automatic tasks → Online input; server type SPORTident Center',
      text: () => `URL: ${origin}/api/rest/v1/punches\nEvent id: ${id}\n(or tick "Use unit id" and type the modems: ${serials || '—'})`,
      needsKey: false,
      note: event.public ? undefined : 'MeOS sends no key in this mode: a private event is refused. Make the event public, or use the ROC mode below.',
    },
    {
      id: 'meos-roc',
      client: 'MeOS — Radio Online Control (ROC)',
      where: 'Automatic tasks → Online input; type Radio Online Control (ROC)',
      text: (key) => `URL: ${roc(key)}\nCompetition id: ${id}`,
      needsKey: !event.public,
    },
    {
      id: 'sirap',
      client: 'SIRAPimport',
      where: 'SportIdentCenter action',
      text: () => `-Url ${origin}/api/rest/v1/punches -Modem ${serials || '<modem serials>'}`,
      needsKey: false,
      note: 'SIRAPimport sends only afterId, after and modem: it reads the modems, not the event id.',
    },
    {
      id: 'radiosender',
      client: 'RadioSender',
      where: 'appsettings: source SPORTident Center',
      text: (key) => `"Source:SportidentCenter:Enable": true\n"Events": [{ "EventId": ${id}, "ApiKey": "${k(key)}", "RefreshMs": 1000 }]`,
      needsKey: true,
      note: `RadioSender has https://center.sportident.com/ built in: it reaches this server (${origin}) only under that name (a DNS or hosts entry and a TLS certificate for it in front of the timing service).`,
    },
    {
      id: 'roc-unit',
      client: 'ROC unit (yaroc and other radio units)',
      where: 'the unit’s upload address',
      text: (key) => `${origin}/roc/key/${k(key)}/sendpunches_v2.php`,
      needsKey: true,
      note: "A unit is registered to the key's club on its first upload; add its address (macaddr) to the event's modems.",
    },
  ];
}

/** The addresses of this server as this browser sees it (`/console/server.json`). */
async function serverOrigins(): Promise<string[]> {
  const res = await fetch('/console/server.json', { cache: 'no-store' });
  const body = (await res.json()) as { origins: string[] };
  return body.origins;
}

/** The settings section of an event's panel. */
export async function settingsSection(event: Schemas['Event']): Promise<HTMLElement> {
  const origins = await serverOrigins();
  const pick = h('select', { id: 'server-origin', name: 'origin' }, ...origins.map((o) => h('option', { value: o }, o)));
  const list = h('div', { id: 'client-settings' });
  const keys = new Map<string, string>();
  const draw = () =>
    fill(
      list,
      ...settingsOf(pick.value, event).map((s) => {
        const pre = h('pre', { id: `setting-${s.id}`, tabindex: '0', 'aria-label': `${s.client} settings` }, s.text(keys.get(s.id) ?? ''));
        const box = h(
          'div',
          { class: 'setting', 'data-client': s.id },
          h('h3', {}, s.client),
          h('p', { class: 'muted' }, s.where),
          pre,
          h(
            'div',
            { class: 'row' },
            copyButton(() => pre.textContent ?? ''),
          ),
          s.note && h('p', { class: 'hint' }, s.note),
        );
        if (s.needsKey && !keys.has(s.id)) {
          const make = h('button', { type: 'button', id: `key-for-${s.id}` }, `Make a key for ${s.client}`);
          make.addEventListener('click', () => {
            void (async () => {
              const res = await api().POST('/api/rest/v1/keys', { body: { name: `${s.client}, event ${event.id}`.slice(0, 100) } });
              if (!res.data) return showProblem(box, problemOf(res.error, res.response));
              keys.set(s.id, res.data.key);
              draw();
              document.getElementById(`setting-${s.id}`)?.focus();
            })();
          });
          box.querySelector('.row')!.append(make);
        }
        return box;
      }),
    );
  pick.addEventListener('change', draw);
  draw();
  return h(
    'section',
    { 'aria-labelledby': 'settings-title', class: 'wide' },
    h('h2', { id: 'settings-title' }, 'Settings for the result software'),
    h('div', { class: 'field' }, h('label', { for: pick.id }, 'Server address'), pick),
    h('p', { class: 'hint' }, 'A key made here is shown once, in these settings only: copy it into the device now.'),
    list,
  );
}
