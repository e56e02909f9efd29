/**
 * The specs' input rules for text and numbers (text-rules.ts, "Text and numbers" in each spec): the
 * formats the validator and the fast lanes register, the NUL/surrogate net, strict integers, and the
 * single-line form in which mails repeat customer text.
 */
import { asSingleLine } from '../src';
import { findForbiddenText, isStrictInteger, isStrictNumber, TEXT_FORMATS } from '../src/text-rules';

test('single-line refuses controls, line breaks, bidi overrides and lone surrogates; text admits TAB, CR, LF', () => {
  const single = TEXT_FORMATS['single-line'];
  const text = TEXT_FORMATS.text;
  expect(['Erika Müller', "O'Brien-Smith", 'Zoë 😀', '東京', 'عربي', ''].every(single)).toBe(true);
  for (const bad of ['a\u0000b', 'a\nb', 'a\rb', 'a\tb', 'a\u007Fb', 'a\u0085b', 'a\u2028b', 'a\u202Eb', 'a\u2066b', '\uD800', 'x\uDC00'])
    expect([bad, single(bad)]).toEqual([bad, false]);
  expect(['line 1\nline 2', 'a\r\nb', 'a\tb'].every(text)).toBe(true);
  for (const bad of ['a\u0000b', 'a\u202Eb', '\uD83D', 'a\u000Bb']) expect([bad, text(bad)]).toEqual([bad, false]);
  expect(TEXT_FORMATS.uri('https://example.com/a?b=c')).toBe(true);
  expect(TEXT_FORMATS.uri('https://example.com/\u0000')).toBe(false);
  expect(TEXT_FORMATS.uri('not a uri')).toBe(false);
});

test('the net finds NUL and unpaired surrogates anywhere, keys included, also 100,000 levels deep', () => {
  expect(findForbiddenText({ a: ['x', { b: 'ok' }] })).toBeUndefined();
  expect(findForbiddenText({ a: ['x', { b: 'n\u0000' }] })).toBe('a[1].b');
  expect(findForbiddenText({ ['k\u0000']: 1 })).toBe('k\u0000');
  expect(findForbiddenText(['\uDFFF'])).toBe('[0]');
  expect(findForbiddenText('😀')).toBeUndefined();
  let deep: unknown = 'x\u0000';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  expect(findForbiddenText(deep)).toMatch(/^\[0\]/);
});

test('strict integers: decimal digits within int64, a sign only where negatives are allowed', () => {
  expect(['0', '16', '007', '9223372036854775807'].map((v) => isStrictInteger(v, false))).toEqual([true, true, true, true]);
  expect(['0x10', '0b11', '1e3', ' 5', '5 ', '+5', '-1', '1e309', '1.0', '', '9223372036854775808'].map((v) => isStrictInteger(v, false))).toEqual(
    Array(11).fill(false),
  );
  expect(['-1', '-9223372036854775808', '-9223372036854775809'].map((v) => isStrictInteger(v, true))).toEqual([true, true, false]);
});

test('strict numbers: decimal with fraction and exponent, finite', () => {
  expect(['0', '1.5', '.5', '5e-3', '1E3', '-5e-324'].map((v) => isStrictNumber(v, true))).toEqual([true, true, true, true, true, true]);
  expect(['0x10', '0b11', ' 5', '+5', '1e309', 'Infinity', 'NaN', '', '1.'].map((v) => isStrictNumber(v, true))).toEqual(Array(9).fill(false));
  expect(isStrictNumber('-1', false)).toBe(false);
});

test('asSingleLine: what a mail repeats of customer text is one bounded line', () => {
  expect(asSingleLine('Erika\r\nBcc: x@example.com', 60)).toBe('Erika Bcc: x@example.com');
  expect(asSingleLine('Erika\u202Efdp.exe', 60)).toBe('Erika fdp.exe');
  expect(asSingleLine('  a \t b  ', 60)).toBe('a b');
  expect(asSingleLine('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
  expect(asSingleLine('😀'.repeat(5), 5)).toBe('😀'.repeat(5));
});
