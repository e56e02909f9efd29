/**
 * Culture negotiation for localized answers (articles, attribute labels, countries): `Accept-Language`
 * parsing with quality values (RFC 9110 §12.5.4) and lookup of the best available culture with English
 * as the fallback.
 */

/** The fallback culture of every localized text. */
const FALLBACK_CULTURE = 'en';

const TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;
const QVALUE = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i;

/**
 * Canonical case of a BCP 47 tag: language lower case, script title case, region upper case
 * (`DE-ch` → `de-CH`, `zh-hant-tw` → `zh-Hant-TW`).
 */
export function canonicalCulture(tag: string): string {
  return tag
    .split('-')
    .map((part, i) => {
      if (i === 0) return part.toLowerCase();
      if (part.length === 4 && /^[A-Za-z]+$/.test(part)) return part[0].toUpperCase() + part.slice(1).toLowerCase();
      if (part.length === 2 || /^\d{3}$/.test(part)) return part.toUpperCase();
      return part.toLowerCase();
    })
    .join('-');
}

/**
 * The language tags of an `Accept-Language` header, most preferred first (quality descending, header
 * order among equals), canonical case. `q=0` entries and `*` are dropped; malformed entries are ignored,
 * so a malformed header behaves like an absent one.
 */
export function parseAcceptLanguage(header: string | undefined): string[] {
  if (!header) return [];
  const entries: { tag: string; q: number; index: number }[] = [];
  header.split(',').forEach((raw, index) => {
    const [tagPart, ...params] = raw
      .trim()
      .split(';')
      .map((s) => s.trim());
    if (!tagPart || tagPart === '*' || !TAG.test(tagPart)) return;
    let q = 1;
    for (const p of params) {
      if (QVALUE.test(p)) q = Number(p.slice(2));
      else return;
    }
    if (q > 0) entries.push({ tag: canonicalCulture(tagPart), q, index });
  });
  entries.sort((a, b) => b.q - a.q || a.index - b.index);
  return entries.map((e) => e.tag);
}

function language(tag: string): string {
  return tag.split('-')[0].toLowerCase();
}

/**
 * The best of `available` (any case) for the preferences: per preference in order, an exact match, then
 * the bare language (`de-CH` → `de`), then another region of the language (`de` → `de-AT`); else English
 * when available, else the first available culture (then `en`). Returns the spelling of `available`
 * (of its last entry when two differ only in case).
 */
export function resolveCulture(preferences: readonly string[], available: Iterable<string>): string {
  const list = [...available];
  const byLower = new Map(list.map((c) => [c.toLowerCase(), c]));
  for (const pref of preferences) {
    const exact = byLower.get(pref.toLowerCase());
    if (exact) return exact;
    const lang = language(pref);
    const bare = byLower.get(lang);
    if (bare) return bare;
    const sibling = list.find((c) => language(c) === lang);
    if (sibling) return sibling;
  }
  return byLower.get(FALLBACK_CULTURE) ?? list[0] ?? FALLBACK_CULTURE;
}

/**
 * The text of `texts` (culture → text) for the preferences, falling back to English; null when `texts`
 * holds nothing usable.
 */
export function localize(texts: Record<string, string> | null | undefined, preferences: readonly string[]): string | null {
  if (!texts) return null;
  const keys = Object.keys(texts).filter((k) => texts[k]);
  if (keys.length === 0) return null;
  return texts[resolveCulture(preferences, keys)];
}
