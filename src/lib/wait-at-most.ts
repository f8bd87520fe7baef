// Waiting for something that may take long, but not longer than a bound (a first load, a shutdown).

const ignore = () => undefined;

/** Resolves when `p` settles (either way) or after `ms`, whichever comes first; the timer never holds the process. */
export function waitAtMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([p.then(ignore, ignore), elapsed]).finally(() => clearTimeout(timer));
}
