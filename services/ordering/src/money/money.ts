/**
 * Integer money arithmetic of orders and discounts (spec conventions: integer cents, rounding half away
 * from zero). Products are computed with BigInt, so `cents × basis points` stays exact beyond 2^53.
 */

/** `numerator / denominator` rounded half away from zero (denominator > 0). @internal */
export function divRoundHalfAwayFromZero(numerator: bigint, denominator: bigint): bigint {
  const sign = numerator < 0n ? -1n : 1n;
  const abs = numerator < 0n ? -numerator : numerator;
  return sign * ((abs * 2n + denominator) / (denominator * 2n));
}

/** A percentage in hundredths of a percent (basis points), e.g. 19 → 1900, 8.1 → 810, 12.345 → 1235. */
function basisPoints(percent: number): bigint {
  return BigInt(Math.round(percent * 100));
}

/** `percent` % of `cents`, rounded half away from zero to whole cents. */
export function percentOf(cents: number, percent: number): number {
  return Number(divRoundHalfAwayFromZero(BigInt(cents) * basisPoints(percent), 10_000n));
}

/**
 * Splits `total` cents over `weights` (cents) in proportion, by the largest-remainder method: the parts
 * are whole cents, sum to `total` exactly, and each part is at most its weight when `total` ≤ Σ weights.
 * Ties of remainders go to the earlier weight. All zero weights → all parts zero (`total` must be 0 then).
 */
export function allocateProportionally(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0) {
    if (total !== 0) throw new Error('cannot allocate a non-zero amount over zero weights');
    return weights.map(() => 0);
  }
  const t = BigInt(total);
  const s = BigInt(sum);
  const parts = weights.map((w) => (t * BigInt(w)) / s);
  let left = t - parts.reduce((a, b) => a + b, 0n);
  const byRemainder = weights.map((w, i) => ({ i, r: (t * BigInt(w)) % s })).sort((a, b) => (b.r > a.r ? 1 : b.r < a.r ? -1 : a.i - b.i));
  for (const { i } of byRemainder) {
    if (left === 0n) break;
    if (weights[i] === 0) continue;
    parts[i] += 1n;
    left -= 1n;
  }
  return parts.map(Number);
}
