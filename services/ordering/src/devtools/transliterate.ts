/**
 * `devTransliterate`: any Unicode text to ASCII with the `transliteration` package
 * ("Zürich Ødegård" → "Zurich Odegard", "Straße" → "Strasse", Cyrillic and CJK romanized). Characters the
 * package cannot map (emoji, symbols) are dropped, so the output is always 7-bit ASCII. The input size is
 * bounded by the spec (10,000 characters) and the body parser (64 KiB).
 */
import { transliterate } from 'transliteration';

/** ASCII form of `text`; line breaks and tabs are kept. */
export function toAscii(text: string): string {
  // eslint-disable-next-line no-control-regex
  return transliterate(text.normalize('NFC'), { unknown: '' }).replace(/[^\x00-\x7F]/g, '');
}
