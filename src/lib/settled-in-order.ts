// Several source calls at once, with a deterministic failure: every call is awaited (so none is left
// unobserved), then the first failure in argument order is thrown, not whichever failed first.

export async function settledInOrder<T extends readonly unknown[]>(promises: readonly [...{ [K in keyof T]: Promise<T[K]> }]): Promise<T> {
  const settled = await Promise.allSettled(promises);
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
