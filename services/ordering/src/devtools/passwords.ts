/**
 * `devGetRandomPassword`: crypto-random passwords from an alphabet without
 * look-alike characters, with at least one character of each class.
 */
import { randomInt } from 'node:crypto';
import { GENERATED_PASSWORD_LENGTH } from '../identity/password-spec';

/** Character classes; `I O l o 0 1` are left out because they are easily confused in print. @internal */
export const PASSWORD_CLASSES = {
  upper: 'ABCDEFGHJKLMNPQRSTUVWXYZ',
  lower: 'abcdefghijkmnpqrstuvwxyz',
  digits: '23456789',
  symbols: '!#$%&*+-=?@_',
} as const;

const ALPHABET = Object.values(PASSWORD_CLASSES).join('');

/** Shortest and longest supported length: the spec's `devGetRandomPassword` `length` bounds (8–128). */
const PASSWORD_MIN_LENGTH = GENERATED_PASSWORD_LENGTH.min;
const PASSWORD_MAX_LENGTH = GENERATED_PASSWORD_LENGTH.max;

/**
 * A password of `length` characters, each drawn uniformly from the whole alphabet with `crypto.randomInt`
 * (itself rejection-sampled, so unbiased); a draw that lacks a class is discarded and redrawn, which keeps
 * the result uniform over all passwords that contain every class.
 */
export function randomPassword(length = 20): string {
  if (!Number.isInteger(length) || length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw new RangeError(`length must be an integer between ${PASSWORD_MIN_LENGTH} and ${PASSWORD_MAX_LENGTH}`);
  }
  for (;;) {
    let out = '';
    for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
    if (Object.values(PASSWORD_CLASSES).every((cls) => [...out].some((c) => cls.includes(c)))) return out;
  }
}
