/**
 * Password hashing (docs/decisions.md §6 identity; `createUser`, `updateUserProfile`): scrypt at the OWASP Password Storage Cheat
 * Sheet setting N=2^17, r=8, p=1, a 64-byte key and a 16-byte random salt. Stored self-describing, so
 * parameters can be raised later and old hashes still verify:
 * `$scrypt$ln=17,r=8,p=1$<salt base64>$<key base64>` (`ln` = log2 N).
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { scryptLnFromEnv } from '../config';
import { USER_PASSWORD_LENGTH } from './password-spec';

/** Cost parameters of one scrypt hash. */
export interface ScryptParams {
  /** log2 of the CPU/memory cost N. */
  ln: number;
  r: number;
  p: number;
}

/** {@link scryptLnFromEnv} of the process; a bad value is reported at start by the configuration (config.ts), not at import. */
function processScryptLn(): number {
  try {
    return scryptLnFromEnv();
  } catch {
    return scryptLnFromEnv({});
  }
}

/** The parameters of new hashes: the OWASP setting (N=2^17, r=8, p=1) unless lowered for tests (see {@link scryptLnFromEnv}). @internal */
export const SCRYPT_PARAMS: ScryptParams = { ln: processScryptLn(), r: 8, p: 1 };
const KEY_LENGTH = 64;
const SALT_LENGTH = 16;

/** Minimum password length: the spec's `NewUser.password` `minLength`. */
const MIN_PASSWORD_LENGTH = USER_PASSWORD_LENGTH.min;

function scrypt(password: string, salt: Buffer, keylen: number, params: ScryptParams): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; Node's default maxmem (32 MiB) is below the 128 MiB of N=2^17, r=8.
  const opts: ScryptOptions = { N: 2 ** params.ln, r: params.r, p: params.p, maxmem: 129 * 2 ** params.ln * params.r + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFC'), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Hashes a password with fresh salt; returns the self-describing string. */
export async function hashPassword(password: string, params: ScryptParams = SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await scrypt(password, salt, KEY_LENGTH, params);
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/**
 * Whether `password` matches `stored`. A null or malformed `stored` still costs one full hash, so that
 * the time of a failed login does not tell whether the account exists.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const m = stored ? FORMAT.exec(stored) : null;
  if (!m) {
    await scrypt(password, randomBytes(SALT_LENGTH), KEY_LENGTH, SCRYPT_PARAMS);
    return false;
  }
  const params = { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (params.ln < 10 || params.ln > 20 || params.r < 1 || params.r > 32 || params.p < 1 || params.p > 16) return false;
  const expected = Buffer.from(m[5], 'base64');
  const actual = await scrypt(password, Buffer.from(m[4], 'base64'), expected.length, params);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * Password policy (documented in the spec's `NewUser.password`): at least `minLength` (12) characters, at most `maxLength`
 * (128; both read from the spec, password-spec.ts), and not the user name (case-insensitively). Returns the problem, or null when the password is acceptable.
 */
export function passwordProblem(password: string, userName: string): string | null {
  if ([...password].length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters long`;
  if (password.length > USER_PASSWORD_LENGTH.max) return `must be at most ${USER_PASSWORD_LENGTH.max} characters long`;
  if (password.trim().toLowerCase() === userName.trim().toLowerCase()) return 'must not be the user name';
  return null;
}
