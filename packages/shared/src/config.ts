/**
 * Environment parsing with clear errors. Every service reads its configuration through these helpers
 * so that a bad value stops the process at start with a message naming the variable, never later.
 */

/** Thrown when an environment variable holds a value that cannot be used. */
export class ConfigError extends Error {
  constructor(name: string, value: string, expected: string) {
    super(`Invalid configuration: ${name}=${JSON.stringify(value)} (expected ${expected})`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Typed readers over an environment map (default `process.env`); empty strings count as unset. */
export function envReader(env: Env = process.env) {
  const raw = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  return {
    /** A string, or the fallback when unset. */
    string(name: string, fallback?: string): string | undefined {
      return raw(name) ?? fallback;
    },
    /** The first set variable among `names`, e.g. `TIMING_DATABASE_URL` then `DATABASE_URL`. */
    firstOf(...names: string[]): string | undefined {
      for (const n of names) {
        const v = raw(n);
        if (v !== undefined) return v;
      }
      return undefined;
    },
    /** An integer within [min, max]; throws ConfigError otherwise. */
    int(name: string, fallback: number, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
      const v = raw(name);
      if (v === undefined) return fallback;
      if (!/^-?\d+$/.test(v)) throw new ConfigError(name, v, `an integer between ${min} and ${max}`);
      const n = Number(v);
      if (n < min || n > max) throw new ConfigError(name, v, `an integer between ${min} and ${max}`);
      return n;
    },
    /** A boolean written as true/false/1/0/yes/no. */
    bool(name: string, fallback: boolean): boolean {
      const v = raw(name);
      if (v === undefined) return fallback;
      if (/^(true|1|yes)$/i.test(v)) return true;
      if (/^(false|0|no)$/i.test(v)) return false;
      throw new ConfigError(name, v, 'true or false');
    },
    /** One of a closed list of values. */
    oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
      const v = raw(name);
      if (v === undefined) return fallback;
      if (!(values as readonly string[]).includes(v)) throw new ConfigError(name, v, `one of ${values.join(', ')}`);
      return v as T;
    },
    /** A URL with one of the given protocols. */
    url(name: string, protocols: string[], fallback?: string): string | undefined {
      const v = raw(name) ?? fallback;
      if (v === undefined) return undefined;
      let u: URL;
      try {
        u = new URL(v);
      } catch {
        throw new ConfigError(name, v, `a URL (${protocols.join(', ')})`);
      }
      if (!protocols.includes(u.protocol.replace(/:$/, ''))) throw new ConfigError(name, v, `a URL (${protocols.join(', ')})`);
      return v;
    },
  };
}
