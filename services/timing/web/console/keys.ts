/**
 * The console's keys (`#/keys`): the caller's keys (`listKeys`; revoked ones with their date), a new key per
 * device (`createKey`, the key shown once with a copy button), revoking one (`deleteKey`). The key this tab is
 * signed in with is marked (`getCaller.keyId`); revoking it signs the tab out. Each key shows when it was last
 * used (`ApiKey.lastUsedAt`, to the minute; "never" for a key not used yet), so an unused device's key can be
 * found and revoked.
 */
import { fill, h } from '../dom';
import { api, clearProblem, copyButton, problemOf, showProblem } from './api';
import type { ViewContext } from './context';

const when = (iso: string) => new Date(iso).toLocaleString();

/**
 * How long ago a key was last used, by the server's clock (`serverNow`, ms UTC, from the answer's `Date`
 * header, so a browser clock that is off does not show "in 5 min"): "never", "just now" within the minute the
 * API is exact to, then minutes and hours; older ones as a local date and time. The exact time is the title.
 */
function lastUsed(iso: string | null, serverNow: number): HTMLElement | string {
  if (iso === null) return 'never';
  const at = Date.parse(iso);
  const min = Math.floor(Math.max(0, serverNow - at) / 60_000);
  const text = min < 1 ? 'just now' : min < 60 ? `${min} min ago` : min < 24 * 60 ? `${Math.floor(min / 60)} h ago` : when(iso);
  return h('time', { datetime: iso, title: when(iso) }, text);
}

/** Draws the keys view into `ctx.root`. */
export async function keysView(ctx: ViewContext): Promise<void> {
  const list = h('div', { id: 'keys-list' });
  const shown = h('div', { id: 'new-key', 'aria-live': 'polite' });
  const name = h('input', { id: 'key-name', name: 'name', required: true, maxlength: '100', placeholder: 'e.g. MeOS laptop' });
  const form = h(
    'form',
    { class: 'stack', id: 'key-form', novalidate: true, 'aria-label': 'New key' },
    h('div', { class: 'field' }, h('label', { for: name.id }, 'Device or use'), name),
    h('button', { type: 'submit' }, 'Create key'),
  );
  fill(
    ctx.root,
    h('h1', {}, 'Keys'),
    h('section', { 'aria-labelledby': 'new-key-title' }, h('h2', { id: 'new-key-title' }, 'New key (one per device)'), form, shown),
    h('section', { 'aria-labelledby': 'keys-title' }, h('h2', { id: 'keys-title' }, `Keys of ${ctx.caller.userName}`), list),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      const res = await api().POST('/api/rest/v1/keys', { body: { name: name.value } });
      if (!res.data) return showProblem(form, problemOf(res.error, res.response));
      clearProblem(form);
      const key = res.data.key;
      const code = h('code', { id: 'new-key-value' }, key);
      fill(
        shown,
        h(
          'p',
          {},
          `Key “${res.data.name}”: `,
          code,
          ' ',
          copyButton(() => key),
        ),
        h('p', { class: 'hint' }, 'Shown only now: copy it into the device. The server keeps only its hash.'),
      );
      name.value = '';
      await drawList();
    })();
  });

  async function drawList(): Promise<void> {
    const { data, error, response } = await api().GET('/api/rest/v1/keys');
    if (!data) {
      const problem = problemOf(error, response);
      if (problem.status === 401) return ctx.signOut(problem.detail);
      return showProblem(list, problem);
    }
    const serverNow = Date.parse(response.headers.get('Date') ?? '') || Date.now();
    fill(
      list,
      h(
        'table',
        { id: 'keys' },
        h('thead', {}, h('tr', {}, ...['Name', 'Starts with', 'Created', 'Last used', 'State', ''].map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          {},
          ...data.map((k) => {
            const revoke = h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke key ${k.name}` }, 'Revoke');
            revoke.addEventListener('click', () => {
              if (!confirm(`Revoke the key “${k.name}” (${k.prefix}…)? Devices using it stop at once.`)) return;
              void (async () => {
                const res = await api().DELETE('/api/rest/v1/keys/{id}', { params: { path: { id: k.id } } });
                if (!res.response.ok) return showProblem(list, problemOf(res.error, res.response));
                if (k.id === ctx.caller.keyId) return ctx.signOut('You revoked the key this tab was signed in with.');
                await drawList();
              })();
            });
            return h(
              'tr',
              { 'data-key-id': String(k.id), 'data-revoked': String(k.revokedAt !== null) },
              h('td', {}, k.name, k.id === ctx.caller.keyId ? h('span', { class: 'badge ok' }, ' this tab') : null),
              h('td', {}, h('code', {}, `${k.prefix}…`)),
              h('td', {}, when(k.createdAt)),
              h('td', { class: 'last-used' }, lastUsed(k.lastUsedAt, serverNow)),
              h('td', {}, k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'active'),
              h('td', {}, k.revokedAt ? null : revoke),
            );
          }),
        ),
      ),
    );
  }
  await drawList();
}
