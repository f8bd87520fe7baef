// Small numeric helpers shared by the computations.

/** Strips binary floating-point noise (0.7069 × 100 = 70.69000000000001 → 70.69); 12 significant digits. */
export function clean(x: number): number {
  return Number(x.toPrecision(12));
}
