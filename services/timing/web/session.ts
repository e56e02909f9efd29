/**
 * The API key of this browser tab: kept in `sessionStorage` only (gone when the tab closes), never in a URL,
 * a cookie or `localStorage`. The console and the live page share it, so the console's live view and
 * `/events/{id}/live` opened from it need no second sign-in.
 */
const KEY_STORAGE = 'timing-live-apikey';

/** The tab's key, or '' when signed out. */
export function storedKey(): string {
  return sessionStorage.getItem(KEY_STORAGE) ?? '';
}

/** Keeps `key` for this tab's session. */
export function storeKey(key: string): void {
  sessionStorage.setItem(KEY_STORAGE, key);
}

/** Forgets the tab's key (sign out, or the service refused it). */
export function forgetKey(): void {
  sessionStorage.removeItem(KEY_STORAGE);
}
