/**
 * The console's users view for the server's admin (`#/users`): every user (`listUsers`) and a new club with
 * its first key (`createUser`, the key shown once with a copy button).
 */
import { fill, h } from '../dom';
import { api, clearProblem, copyButton, problemOf, showProblem } from './api';
import type { ViewContext } from './context';

/** Draws the users view into `ctx.root`. */
export async function usersView(ctx: ViewContext): Promise<void> {
  const list = h('div', { id: 'users-list' });
  const shown = h('div', { id: 'new-user', 'aria-live': 'polite' });
  const userName = h('input', { id: 'user-name', name: 'userName', required: true, maxlength: '64', placeholder: 'e.g. ok-lagune' });
  const keyName = h('input', { id: 'user-key-name', name: 'keyName', maxlength: '100', placeholder: 'default' });
  const form = h(
    'form',
    { class: 'stack', id: 'user-form', novalidate: true, 'aria-label': 'New club' },
    h('div', { class: 'field' }, h('label', { for: userName.id }, 'Club (user name: letters, digits, . _ -)'), userName),
    h('div', { class: 'field' }, h('label', { for: keyName.id }, 'Name of its first key'), keyName),
    h('button', { type: 'submit' }, 'Create club'),
  );
  fill(
    ctx.root,
    h('h1', {}, 'Users'),
    h('section', { 'aria-labelledby': 'new-user-title' }, h('h2', { id: 'new-user-title' }, 'New club'), form, shown),
    h('section', { 'aria-labelledby': 'users-title' }, h('h2', { id: 'users-title' }, 'All users'), list),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      const res = await api().POST('/api/rest/v1/users', { body: { userName: userName.value, ...(keyName.value ? { keyName: keyName.value } : {}) } });
      if (!res.data) return showProblem(form, problemOf(res.error, res.response));
      clearProblem(form);
      const key = res.data.key.key;
      fill(
        shown,
        h(
          'p',
          {},
          `Club “${res.data.user.userName}”, key “${res.data.key.name}”: `,
          h('code', { id: 'new-user-key' }, key),
          ' ',
          copyButton(() => key),
        ),
        h('p', { class: 'hint' }, 'Shown only now: hand it to the club, which signs in here with it and makes a key per device.'),
      );
      userName.value = '';
      keyName.value = '';
      await drawList();
    })();
  });

  async function drawList(): Promise<void> {
    const { data, error, response } = await api().GET('/api/rest/v1/users');
    if (!data) return showProblem(list, problemOf(error, response));
    fill(
      list,
      h(
        'table',
        { id: 'users' },
        h('thead', {}, h('tr', {}, ...['Id', 'User', 'Role', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          {},
          ...data.map((u) =>
            h(
              'tr',
              {},
              h('td', { class: 'num' }, String(u.id)),
              h('td', {}, u.userName),
              h('td', {}, u.role),
              h('td', {}, new Date(u.createdAt).toLocaleString()),
            ),
          ),
        ),
      ),
    );
  }
  await drawList();
}
