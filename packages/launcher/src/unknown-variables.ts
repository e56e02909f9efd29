/**
 * Variables a club sets but the product never reads (README "Configuration", "Start-up"): a misspelt
 * `TIMNG_PORT=9081` would otherwise be ignored without a word while the service listens on 8081. The list of
 * known names is the README's configuration table (its first column), the one list an operator reads, so
 * nothing here can drift from it. Warned about: an unknown name with a prefix of the product's variables,
 * and any name within two edits of a known one (with a "did you mean").
 */
import leven from 'leven';

/** Name prefixes of the product's own variables: an unknown name with one of them is a mistake, not the platform's. */
const PREFIXES = ['ORDERING_', 'TIMING_', 'ERP_', 'PAYMENT_', 'EMBEDDED_', 'DEMO_', 'SIM_', 'SMTP_', 'JWT_', 'LOGIN_', 'RATE_LIMIT_', 'ORDER_'];

/** The variable names of README's "Configuration" table (every `` `NAME` `` of a row's first cell). */
export function configurationTableNames(readme: string): Set<string> {
  const start = readme.indexOf('\n## Configuration');
  if (start < 0) return new Set();
  const end = readme.indexOf('\n## ', start + 1);
  const names = new Set<string>();
  for (const row of readme.slice(start, end < 0 ? undefined : end).split('\n')) {
    if (!row.startsWith('| `')) continue;
    const firstCell = row.split('|')[1];
    for (const m of firstCell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(m[1]);
  }
  return names;
}

/**
 * One warning line per variable of `env` that is not in `known` and either carries a product prefix or is
 * close to a known name (at most two edits; names of five characters or more, so `PWD` is not `PG_BIN`).
 * Shape: `warning: TIMNG_PORT is not a setting of this product and is ignored; did you mean TIMING_PORT?`.
 */
export function unknownVariableWarnings(env: NodeJS.ProcessEnv, known: Set<string>): string[] {
  if (known.size === 0) return [];
  const lines: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || !/^[A-Z][A-Z0-9_]+$/.test(name)) continue;
    let best: { name: string; distance: number } | undefined;
    if (name.length >= 5)
      for (const k of known) {
        const distance = leven(name, k);
        if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name: k, distance };
      }
    if (best) lines.push(`warning: ${name} is not a setting of this product and is ignored; did you mean ${best.name}?`);
    else if (PREFIXES.some((p) => name.startsWith(p)))
      lines.push(`warning: ${name} is not a setting of this product and is ignored (README "Configuration" lists them)`);
  }
  return lines;
}
