// A primary source with a fallback, hedged: when the primary fails (or its circuit is open, which
// fails at once) the fallback is asked at once; when the primary is merely slow, the fallback is
// started after `delayMs` and the first good answer wins. An answer that is not a failure ("unknown
// symbol") ends it: a fallback is for a provider that broke, not for a question it answered.
// When the fallback was asked, how it ended goes to a recorder (the metrics, when on); the quick path
// of a primary that answered at once records nothing.
import { UpstreamError } from '../lib/errors.ts';

/**
 * How a hedge that asked the fallback ended: `failover` (the primary failed or its circuit was open;
 * the fallback served), `hedge_won` (the primary was slow; the fallback's answer was used),
 * `primary_won` (the primary was slow but its answer was used), `failed` (it ended in an error: both
 * legs failed, or the fallback's "no such item" was passed on).
 */
export type HedgeOutcome = 'failover' | 'hedge_won' | 'primary_won' | 'failed';

export interface HedgeRecorder {
  hedge(primary: string, fallback: string, outcome: HedgeOutcome): void;
}

export const NO_HEDGE_RECORDER: HedgeRecorder = { hedge() {} };

export interface HedgeLeg<T> {
  /** Provider name, for the reason and the combined error. */
  source: string;
  run: () => Promise<T>;
}

export interface Hedged<T> {
  value: T;
  /** Present when the fallback's answer was used: from whom, to whom, and why. */
  fallback?: { from: string; to: string; reason: string };
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

const settle = <T>(p: Promise<T>): Promise<Settled<T>> => p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));

const IMMEDIATE = Symbol('immediate');
/** Resolves in the next turn of the event loop: one setImmediate shared by every hedge started in this turn. */
let turn: Promise<typeof IMMEDIATE> | null = null;
const nextTurn = (): Promise<typeof IMMEDIATE> =>
  (turn ??= new Promise((resolve) =>
    setImmediate(() => {
      turn = null;
      resolve(IMMEDIATE);
    }),
  ));

export async function hedge<T>(primary: HedgeLeg<T>, fallback: HedgeLeg<T>, delayMs: number, recorder: HedgeRecorder = NO_HEDGE_RECORDER): Promise<Hedged<T>> {
  const started = performance.now();
  const first = settle(primary.run());
  // A cached answer settles within this turn of the event loop: no timer for it (the hot path).
  const quick = await Promise.race([first, nextTurn()]);
  let early: Settled<T> | 'slow';
  if (quick === IMMEDIATE) {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<'slow'>((resolve) => (timer = setTimeout(() => resolve('slow'), Math.max(0, delayMs - (performance.now() - started)))));
    early = await Promise.race([first, waited]);
    clearTimeout(timer);
  } else {
    early = quick;
  }

  if (early !== 'slow') {
    if (early.ok) return { value: early.value };
    if (!(early.error instanceof UpstreamError)) throw early.error;
    return recorded(runFallback(primary, fallback, early.error), 'failover');
  }
  return recorded(race(primary, fallback, first, delayMs), 'hedge_won');

  /** Records how a hedge that asked the fallback ended: `served` when the fallback's answer was used. */
  function recorded(result: Promise<Hedged<T>>, served: HedgeOutcome): Promise<Hedged<T>> {
    return result.then(
      (got) => {
        recorder.hedge(primary.source, fallback.source, got.fallback ? served : 'primary_won');
        return got;
      },
      (err: unknown) => {
        recorder.hedge(primary.source, fallback.source, 'failed');
        throw err;
      },
    );
  }
}

/** The primary is slow: race it against the fallback; the first success wins. */
async function race<T>(primary: HedgeLeg<T>, fallback: HedgeLeg<T>, first: Promise<Settled<T>>, delayMs: number): Promise<Hedged<T>> {
  const reason = `${primary.source} had not answered after ${delayMs} ms`;
  const second = settle(fallback.run());
  const winner = await Promise.race([first.then((r) => ({ leg: 'primary' as const, r })), second.then((r) => ({ leg: 'fallback' as const, r }))]);
  if (winner.r.ok) return winner.leg === 'primary' ? { value: winner.r.value } : { value: winner.r.value, fallback: { from: primary.source, to: fallback.source, reason } };
  if (winner.leg === 'primary' && !(winner.r.error instanceof UpstreamError)) throw winner.r.error;
  // One leg failed: the other one decides.
  const [p, f] = await Promise.all([first, second]);
  if (p.ok) return { value: p.value };
  if (!(p.error instanceof UpstreamError)) throw p.error;
  if (f.ok) return { value: f.value, fallback: { from: primary.source, to: fallback.source, reason: p.error.message } };
  throw combined(p.error, f.error);
}

async function runFallback<T>(primary: HedgeLeg<T>, fallback: HedgeLeg<T>, err: UpstreamError): Promise<Hedged<T>> {
  const f = await settle(fallback.run());
  if (f.ok) return { value: f.value, fallback: { from: primary.source, to: fallback.source, reason: err.message } };
  throw combined(err, f.error);
}

/** Both failed: the primary's failure, with the fallback's in the message. An answer of the fallback (404) is passed on. */
function combined(primaryErr: UpstreamError, fallbackErr: unknown): Error {
  if (!(fallbackErr instanceof UpstreamError)) return fallbackErr as Error;
  return new UpstreamError(primaryErr.source!, primaryErr.failure, `${primaryErr.message}; fallback ${fallbackErr.message}`, {
    cause: fallbackErr,
    status: primaryErr.upstreamStatus,
    retryAfterS: primaryErr.retryAfterS,
  });
}
