/**
 * Adapts validator errors before the shared problem+json handler renders them.
 */
import type { ErrorRequestHandler } from 'express';

/** `/body/12/code` → `.body[12].code`; `/query/afterId` → `.query.afterId`. */
export function pointerToPath(pointer: string): string {
  if (!pointer.startsWith('/')) return pointer;
  return pointer
    .slice(1)
    .split('/')
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
    .join('');
}

/**
 * express-openapi-validator 5.6 reports JSON-pointer paths (`/body/0/card`) while the shared error
 * handler expects dotted ones (`.body[0].card`) to derive field names; rewrite them so that upload rows
 * come out keyed `[0].card` as the spec documents. Remove once the shared normalizer reads pointers.
 */
export const validatorPathsToFields: ErrorRequestHandler = (err, _req, _res, next) => {
  const items = (err as { errors?: unknown })?.errors;
  if (Array.isArray(items)) {
    for (const it of items as { path?: unknown }[]) if (typeof it?.path === 'string') it.path = pointerToPath(it.path);
  }
  next(err);
};
