// Small numeric helpers shared by the computations.

/** Strips binary floating-point noise (0.7069 × 100 = 70.69000000000001 → 70.69); 12 significant digits. */
export function clean(x: number): number {
  return Number(x.toPrecision(12));
}

/** Rounds to `dp` decimal places (half away from zero, as toFixed does), at most 20. */
export function roundTo(n: number, dp: number): number {
  return Number(n.toFixed(Math.min(Math.max(dp, 0), 20)));
}

/** A funding-size fraction as a signed percentage with 4 decimals: 0.0003 → "+0.0300%", -0.0001 → "-0.0100%". */
export function signedPct(fraction: number): string {
  return `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(4)}%`;
}
