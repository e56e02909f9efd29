/**
 * The input rules for text and integers that both specs state once ("Text and numbers" in each spec's
 * description) and that every layer applies alike: the request validator (registered as ajv formats), the
 * fast lanes (fast-lane.ts) and the pipeline's safety net ({@link findForbiddenText}).
 *
 * Text formats (JSON Schema `format` on `type: string`):
 * - `single-line`: names, ids and every other one-line field. No C0/C1 control character (so no NUL, TAB, CR,
 *   LF), no DEL, no line or paragraph separator (U+2028/2029), no bidirectional embedding, override or
 *   isolate (U+202A–U+202E, U+2066–U+2069: they make text read differently from what it is, e.g. in a mail),
 *   no unpaired UTF-16 surrogate (not text; PostgreSQL cannot store NUL at all).
 * - `text`: multi-line free text (notes, descriptions, CSV bodies): the same, except that TAB, LF and CR
 *   are allowed.
 * - `password` and `uri` (OpenAPI/JSON Schema formats whose stock checks admit any character): `single-line`,
 *   and for `uri` also an absolute URL as WHATWG URL parsing takes it.
 *
 * The regular expressions use the `u` flag, so a surrogate pair is one code point (allowed) and a lone
 * surrogate is the code point U+D800–U+DFFF (refused), as ajv compiles `pattern` (its `unicodeRegExp`).
 */

const NOT_TEXT = '\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069\\uD800-\\uDFFF';

/** `single-line`: see the module comment. */
const SINGLE_LINE = new RegExp(`^[^${NOT_TEXT}\\u0009\\u000A\\u000D]*$`, 'u');
/** `text`: see the module comment. */
const MULTI_LINE = new RegExp(`^[^${NOT_TEXT}]*$`, 'u');
/** Characters no string of any request may hold, whatever its schema (see {@link findForbiddenText}). */
// eslint-disable-next-line no-control-regex -- NUL is the character this rule exists to find.
const NEVER = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The string formats of the specs, by name: a predicate on the text (see the module comment). */
export const TEXT_FORMATS: Readonly<Record<string, (s: string) => boolean>> = {
  'single-line': (s) => SINGLE_LINE.test(s),
  text: (s) => MULTI_LINE.test(s),
  password: (s) => SINGLE_LINE.test(s),
  uri: (s) => SINGLE_LINE.test(s) && URL.canParse(s),
};

/**
 * The first string in `value` (object keys included, up to `maxNodes` nodes, iteratively so a deeply
 * nested body cannot overflow the stack) that holds a NUL or an unpaired surrogate, as a path such as
 * `contact.firstName` or `[3].card`; undefined when there is none. This is the pipeline's net under the
 * formats: it holds also where a schema is open (`additionalProperties`, third-party webhooks), so such a
 * character is a 400 everywhere and never reaches the database (which refuses NUL with an error).
 */
export function findForbiddenText(value: unknown, maxNodes = 1_000_000): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  let seen = 0;
  while (stack.length > 0 && seen++ < maxNodes) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (NEVER.test(v)) return path || '(value)';
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const at = path ? `${path}.${k}` : k;
        if (NEVER.test(k)) return at;
        stack.push([x, at]);
      }
    }
  }
  return undefined;
}

/**
 * Whether `text` is an integer as the specs take it in query, path and header parameters (and form fields):
 * decimal digits only, a leading `-` only when `negative` (the schema admits values below 0), no sign `+`,
 * spaces, `0x`/`0b` prefixes, exponents or fractions, and within the signed 64-bit range. The schema's own
 * `minimum`/`maximum` are checked by the validator after this.
 */
export function isStrictInteger(text: string, negative: boolean): boolean {
  if (!(negative ? /^-?[0-9]{1,40}$/ : /^[0-9]{1,40}$/).test(text)) return false;
  const n = BigInt(text);
  return n >= -(2n ** 63n) && n <= 2n ** 63n - 1n;
}

/**
 * Whether `text` is a number as the specs take it in parameters (`type: number`): decimal, with an optional
 * fraction and exponent (`1.5`, `5e-3`), finite (`1e309` is not), a leading `-` only when `negative`; no
 * spaces, `+` sign, `0x`/`0b` prefixes, `Infinity` or `NaN`.
 */
export function isStrictNumber(text: string, negative: boolean): boolean {
  if (
    !(
      negative ? /^-?([0-9]{1,40}(\.[0-9]{1,40})?|\.[0-9]{1,40})([eE][-+]?[0-9]{1,4})?$/ : /^([0-9]{1,40}(\.[0-9]{1,40})?|\.[0-9]{1,40})([eE][-+]?[0-9]{1,4})?$/
    ).test(text)
  )
    return false;
  return Number.isFinite(Number(text));
}

const NOT_SINGLE_LINE = new RegExp(`[${NOT_TEXT}\\u0009\\u000A\\u000D]+`, 'gu');

/**
 * `text` as one bounded line for a place where customer-supplied text is repeated to someone else (an
 * e-mail, docs/mails.md): every character `single-line` refuses (controls, line breaks, bidi overrides,
 * lone surrogates) becomes a space, runs of white space one space, and more than `maxLength` code points
 * are cut with `…`. Input that passed validation is unchanged except for the bound; this also holds text
 * stored before the rule or arriving from elsewhere.
 */
export function asSingleLine(text: string, maxLength: number): string {
  const line = text.replace(NOT_SINGLE_LINE, ' ').replace(/\s+/g, ' ').trim();
  const points = [...line];
  return points.length <= maxLength
    ? line
    : `${points
        .slice(0, maxLength - 1)
        .join('')
        .trimEnd()}…`;
}
