/**
 * Payrexx's PHP-style form names (docs/payrexx.md): numeric keys stay object keys so a form body has the shape
 * of the same body sent as JSON; prototype keys are dropped; the parameter bound is enforced, not truncated.
 */
import { TooManyFormParametersError, parseBracketForm } from '../src/bracket-form';

test('bracket names nest; numeric keys stay object keys, as in the JSON form of the same webhook', () => {
  const form =
    'transaction[id]=7&transaction[invoice][customFields][1][name]=Club&transaction[invoice][customFields][1][value]=OL%20Z%C3%BCrich&transaction[invoice][products][0][sku]=SIAC1&plain=x';
  expect(parseBracketForm(form)).toEqual({
    transaction: { id: '7', invoice: { customFields: { '1': { name: 'Club', value: 'OL Zürich' } }, products: { '0': { sku: 'SIAC1' } } } },
    plain: 'x',
  });
});

test('prototype keys are not merged into the result or into Object.prototype', () => {
  const parsed = parseBracketForm('__proto__[polluted]=1&transaction[__proto__][x]=1&transaction[id]=2');
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(parsed).toEqual({ transaction: { id: '2' } });
});

test('more parameters than allowed is an error (413), not a silently shortened body', () => {
  const body = Array.from({ length: 11 }, (_, i) => `a[${i}]=${i}`).join('&');
  expect(() => parseBracketForm(body, { parameterLimit: 10 })).toThrow(TooManyFormParametersError);
  expect(Object.keys(parseBracketForm(body, { parameterLimit: 11 }).a as object)).toHaveLength(11);
});
