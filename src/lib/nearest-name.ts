// The name someone most likely meant: a query parameter's (edge/validator.ts), a path's (edge/edge.ts), a
// setting's in .env (lib/env.ts). Another case, or a few typos (an edit distance that counts a swap as one).

/** The accepted name `name` is in another case or with a few typos (at most `most`, and a third of its length); undefined when none is. */
export function nearestName(name: string, accepted: readonly string[], most: number): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.min(most, Math.floor(name.length / 3));
  for (const candidate of accepted) {
    const d = candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase(), bestDistance);
    if (d <= bestDistance && (best === undefined || d < bestDistance)) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/**
 * Edit distance of two short names, a swap of two neighbours counting as one typo (PROT → PORT), or more than
 * `max` as soon as it is known to exceed it.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max || a.length > 64 || b.length > 64) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) current[j] = Math.min(current[j]!, before[j - 2]! + 1);
    }
    // Row i+1 is made of rows i and i-1 (a swap): once both are past max, so is everything after.
    if (Math.min(...current, ...previous) > max) return max + 1;
    [before, previous] = [previous, current];
  }
  return previous[b.length]!;
}
