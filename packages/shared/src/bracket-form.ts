/**
 * Form bodies with PHP bracket names (`transaction[invoice][referenceId]=…`, `fields[email][defaultValue]=…`), as
 * Payrexx sends and takes them (docs/payrexx.md), parsed into nested objects by `qs`, the parser Express uses
 * for such bodies. Numeric keys stay object keys (`customFields[1]` → `{ customFields: { '1': … } }`) so a
 * body parses to the same shape whether its keys are numbers or names; values stay strings.
 */
import qs from 'qs';

/** Thrown by {@link parseBracketForm} when a body has more parameters than allowed (HTTP: 413, as body-parser's `parameters.too.many`). @internal */
export class TooManyFormParametersError extends Error {
  readonly status = 413;
  readonly type = 'parameters.too.many';
  constructor(limit: number) {
    super(`more than ${limit} form parameters`);
  }
}

/**
 * The nested object of a bracket-named form body (a name that is not bracket syntax stays a plain key; names
 * nest at most `depth` levels, deeper brackets stay part of the key). Throws {@link TooManyFormParametersError}
 * beyond `parameterLimit` parameters.
 */
export function parseBracketForm(body: string, limits: { parameterLimit?: number; depth?: number } = {}): Record<string, unknown> {
  const parameterLimit = limits.parameterLimit ?? 10_000;
  try {
    return qs.parse(body, {
      parseArrays: false,
      depth: limits.depth ?? 20,
      parameterLimit,
      throwOnLimitExceeded: true,
      allowPrototypes: false,
      plainObjects: true,
    });
  } catch (err) {
    if (err instanceof RangeError) throw new TooManyFormParametersError(parameterLimit);
    throw err;
  }
}
