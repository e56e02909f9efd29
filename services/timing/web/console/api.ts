/**
 * The console's access to the timing API: the typed client (packages/timing-client) with the tab's key, and
 * how an answer's ProblemDetails is shown: each `errors` entry next to the form field it names, the `detail`
 * at the form's foot.
 */
import type { Client } from 'openapi-fetch';
import type { components, paths } from '@sports-timing/contracts/src/generated/timing';
import { createTimingApi } from '@sports-timing/timing-client/src/api';
import { h } from '../dom';
import { storedKey } from '../session';

/** API schemas the console shows. */
export type Schemas = components['schemas'];
/** An RFC 9457 problem of the API (`Problem`). */
export type Problem = Schemas['Problem'];

/** The typed client with the tab's key (read at each call, so a sign-out takes effect at once). */
export function api(): Client<paths> {
  return createTimingApi({ baseUrl: location.origin, apiKey: storedKey() || undefined });
}

/** The problem of a failed answer, or a made-up one when the body is not a problem (a proxy's page). */
export function problemOf(error: unknown, response: Response): Problem {
  const p = error as Problem | undefined;
  return p && typeof p === 'object' && typeof p.status === 'number' ? p : { title: response.statusText || 'Error', status: response.status };
}

/** Removes the messages {@link showProblem} put into `form`. */
export function clearProblem(form: HTMLElement): void {
  for (const el of form.querySelectorAll('.field-error, .form-error')) el.remove();
  for (const el of form.querySelectorAll<HTMLElement>('[aria-invalid]')) {
    el.removeAttribute('aria-invalid');
    // Back to the control's own description (its hint), without the removed message.
    if (el.dataset.describedby) el.setAttribute('aria-describedby', el.dataset.describedby);
    else el.removeAttribute('aria-describedby');
  }
}

/**
 * Shows `problem` in `form`: each `errors` key (`modems[0]`, `to`, `userName`) under the control whose
 * `name` is its first segment, linked by `aria-describedby` and marked `aria-invalid`; the `detail` (or the
 * title) in an alert at the form's foot. Focuses the first invalid control, else the alert.
 */
export function showProblem(form: HTMLElement, problem: Problem): void {
  clearProblem(form);
  let first: HTMLElement | null = null;
  for (const [key, messages] of Object.entries(problem.errors ?? {})) {
    const name = key.split(/[[.]/)[0];
    const control = form.querySelector<HTMLElement>(`[name="${CSS.escape(name)}"]`);
    if (!control) continue;
    const id = `${control.id}-error`;
    control.setAttribute('aria-invalid', 'true');
    control.dataset.describedby ??= control.getAttribute('aria-describedby') ?? '';
    control.setAttribute('aria-describedby', `${id} ${control.dataset.describedby}`.trim());
    control.insertAdjacentElement('afterend', h('span', { id, class: 'field-error' }, messages.join('; ')));
    first ??= control;
  }
  const alert = h('p', { class: 'form-error', role: 'alert', tabindex: '-1' }, problem.detail ?? problem.title ?? `Error ${problem.status}`);
  form.append(alert);
  (first ?? alert).focus();
}

/** A button that copies `text` to the clipboard and says so (the console's settings and new keys). */
export function copyButton(text: () => string, label = 'Copy'): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'copy' }, label);
  button.addEventListener('click', () => {
    void navigator.clipboard.writeText(text()).then(
      () => (button.textContent = 'Copied'),
      () => (button.textContent = 'Select and copy by hand'),
    );
    setTimeout(() => (button.textContent = label), 2000);
  });
  return button;
}
