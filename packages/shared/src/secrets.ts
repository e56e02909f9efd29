/**
 * Secrets for development: generated once into `.data/keys/` and reused, so that a restart keeps tokens,
 * ciphertexts and keys valid. Production passes them through the environment instead (docs/decisions.md §3).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from './config';

/**
 * Returns the value of `envValue` when set; otherwise the content of `<dir>/<name>`, creating it with
 * `generate()` (default: 32 random bytes, base64url) on first use with mode 0600. `dir` is `<DATA_DIR>/keys`:
 * a folder that cannot be read or written there throws a {@link ConfigError} naming `DATA_DIR` (README
 * "Configuration"), one line instead of a bare file-system error.
 */
export function devSecret(
  dir: string,
  name: string,
  envValue: string | undefined,
  generate: () => string = () => randomBytes(32).toString('base64url'),
): string {
  if (envValue) return envValue;
  const file = path.join(dir, name);
  try {
    if (existsSync(file)) return readFileSync(file, 'utf8').trim();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const value = generate();
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return value;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (!code) throw err;
    throw new ConfigError('DATA_DIR', path.dirname(dir), '', `cannot keep development keys in ${dir}: ${(err as Error).message}`);
  }
}
