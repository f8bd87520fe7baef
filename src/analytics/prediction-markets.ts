// Prediction-market arithmetic on Kalshi quotes (dollars per contract paying $1, i.e. 0–1):
// implied probability, order-book summary of a bids-only book, and Fed-decision odds.
import { clean } from './numbers.ts';

export interface YesQuote {
  yes_bid: number | null;
  /** Contracts at the bid; null when Kalshi did not say. */
  yes_bid_size: number | null;
  yes_ask: number | null;
  yes_ask_size: number | null;
  last_price: number | null;
  /** Kalshi's lifecycle status (active, closed, determined, finalized, …); absent: read as trading. */
  status?: string | null;
  /** Kalshi's result once determined: "yes", "no", "scalar", "void"; "" or null before. */
  result?: string | null;
}

/**
 * The YES bid when one rests: a price above 0 with a size that is not 0 (Kalshi writes "no bid" as
 * 0.0000 with size 0.00). An unknown size ("" on the wire) counts as a bid when the price is above 0.
 */
export function quotedBid(q: YesQuote): number | null {
  if (q.yes_bid === null || q.yes_bid <= 0 || q.yes_bid_size === 0) return null;
  return q.yes_bid;
}

/** The YES ask when one rests: a price below 1 (1.0000 means no NO bid to sell against) with a size that is not 0. */
export function quotedAsk(q: YesQuote): number | null {
  if (q.yes_ask === null || q.yes_ask <= 0 || q.yes_ask >= 1 || q.yes_ask_size === 0) return null;
  return q.yes_ask;
}

/** The last trade price, when the market has traded (Kalshi sends 0.0000 before the first trade). */
export function tradedPrice(q: YesQuote): number | null {
  return q.last_price !== null && q.last_price > 0 ? q.last_price : null;
}

/**
 * Statuses whose `result` is the outcome (Kalshi's market lifecycle): `determined` (result known, settlement
 * timer running), `amended` (re-determined after a dispute), `finalized` (paid out; the `status=settled`
 * filter's value, which older answers wrote as the status itself). Not `disputed`: its result may change.
 */
export const RESOLVED_STATUSES: ReadonlySet<string> = new Set(['determined', 'amended', 'finalized', 'settled']);

export type ProbabilityBasis = 'result' | 'mid' | 'last_price' | 'last_price_clamped';

export interface ImpliedProbability {
  probability: number | null;
  basis: ProbabilityBasis | null;
}

/**
 * Implied probability of YES, by the first rule that applies:
 * 1. resolved (RESOLVED_STATUSES): result "yes" → 1, "no" → 0 (`result`); any other result (void, scalar)
 *    → null: the book and the last trade of a resolved market are history, not a probability;
 * 2. both sides quoted: the mid (bid + ask) / 2 (`mid`);
 * 3. else the last trade, clamped into what the live quote allows — [0, ask] with no bid, [bid, 1] with no
 *    ask — so it never lies outside the quote (`last_price`, or `last_price_clamped` when it was moved);
 * 4. else null: one side or none quoted and never traded, nothing to read.
 */
export function impliedProbability(q: YesQuote): ImpliedProbability {
  if (q.status && RESOLVED_STATUSES.has(q.status.toLowerCase())) {
    const result = q.result?.toLowerCase();
    if (result === 'yes') return { probability: 1, basis: 'result' };
    if (result === 'no') return { probability: 0, basis: 'result' };
    return { probability: null, basis: null };
  }
  const bid = quotedBid(q);
  const ask = quotedAsk(q);
  if (bid !== null && ask !== null) return { probability: clean((bid + ask) / 2), basis: 'mid' };
  const last = tradedPrice(q);
  if (last === null) return { probability: null, basis: null };
  const clamped = Math.min(Math.max(last, bid ?? 0), ask ?? 1);
  return clamped === last ? { probability: last, basis: 'last_price' } : { probability: clamped, basis: 'last_price_clamped' };
}

export type Level = [price: number, size: number];

export interface BidsOnlyBook {
  /** Best (highest) first. */
  yes_bids: Level[];
  no_bids: Level[];
  best_yes_bid: number | null;
  best_no_bid: number | null;
  /** 1 − best NO bid: buying YES is selling NO to the best NO bidder. */
  best_yes_ask: number | null;
  /** 1 − best YES bid. */
  best_no_ask: number | null;
  /** best_yes_ask − best_yes_bid. */
  spread: number | null;
  /** Σ size of the YES bids listed, contracts. */
  depth_yes: number;
  depth_no: number;
}

/**
 * A Kalshi book (bids only on both sides, in any order) sorted best first, cut to `depth` levels a side,
 * and summarised; an empty side makes its figures null.
 */
export function summariseBidsOnlyBook(yes: Level[], no: Level[], depth: number): BidsOnlyBook {
  const yesBids = [...yes].sort((a, b) => b[0] - a[0]).slice(0, depth);
  const noBids = [...no].sort((a, b) => b[0] - a[0]).slice(0, depth);
  const bestYes = yesBids[0]?.[0] ?? null;
  const bestNo = noBids[0]?.[0] ?? null;
  const yesAsk = bestNo === null ? null : clean(1 - bestNo);
  return {
    yes_bids: yesBids,
    no_bids: noBids,
    best_yes_bid: bestYes,
    best_no_bid: bestNo,
    best_yes_ask: yesAsk,
    best_no_ask: bestYes === null ? null : clean(1 - bestYes),
    spread: yesAsk === null || bestYes === null ? null : clean(yesAsk - bestYes),
    depth_yes: clean(yesBids.reduce((s, l) => s + l[1], 0)),
    depth_no: clean(noBids.reduce((s, l) => s + l[1], 0)),
  };
}

export type FedBucket = 'cut' | 'hold' | 'hike';

/**
 * The bucket of a Kalshi Fed-decision market: from its custom strike ({ Cut: "25" } → cut,
 * { Hike: "0" } → hold, { Hike: "25" } → hike), else from the ticker's suffix (-C25/-C26 cut, -H0 hold,
 * -H25/-H26 hike); null when neither says.
 */
export function fedBucket(ticker: string, customStrike: Record<string, string> | null): FedBucket | null {
  if (customStrike) {
    if ('Cut' in customStrike) return 'cut';
    if ('Hike' in customStrike) return /^0+$/.test(customStrike.Hike!.trim()) ? 'hold' : 'hike';
  }
  const suffix = /-([CH])(\d+)$/.exec(ticker);
  if (!suffix) return null;
  if (suffix[1] === 'C') return 'cut';
  return Number(suffix[2]) === 0 ? 'hold' : 'hike';
}

export interface FedMarket extends YesQuote {
  ticker: string;
  custom_strike: Record<string, string> | null;
}

export interface FedOdds {
  /** Normalised: each bucket's raw sum / the sum of all buckets; they add up to 1. */
  cut: number;
  hold: number;
  hike: number;
  raw: { cut: number; hold: number; hike: number; sum: number };
  markets: { ticker: string; bucket: FedBucket; price: number; basis: ProbabilityBasis }[];
}

/**
 * Odds of a mutually exclusive Fed-decision event: each market's implied probability (impliedProbability:
 * mid, else the last trade clamped into the quote), summed per bucket (cut = Σ cut markets, ...), then divided by the total so they add up to 1.
 * A market that cannot be classified or priced makes the odds unknown (returned as a reason): leaving
 * it out would count it as 0.
 */
export function fedOdds(markets: FedMarket[]): { odds: FedOdds } | { reason: string } {
  if (markets.length === 0) return { reason: 'the event lists no markets' };
  const rows: FedOdds['markets'] = [];
  for (const m of markets) {
    const bucket = fedBucket(m.ticker, m.custom_strike);
    if (!bucket) return { reason: `market ${m.ticker} is not a cut, hold or hike bucket` };
    const p = impliedProbability(m);
    if (p.probability === null || p.basis === null) {
      const resolved = m.status && RESOLVED_STATUSES.has(m.status.toLowerCase());
      return { reason: resolved ? `market ${m.ticker} is ${m.status} without a yes or no result` : `market ${m.ticker} has neither a two-sided quote nor a trade` };
    }
    rows.push({ ticker: m.ticker, bucket, price: p.probability, basis: p.basis });
  }
  const sumOf = (b: FedBucket) => clean(rows.filter((r) => r.bucket === b).reduce((s, r) => s + r.price, 0));
  const raw = { cut: sumOf('cut'), hold: sumOf('hold'), hike: sumOf('hike'), sum: 0 };
  raw.sum = clean(raw.cut + raw.hold + raw.hike);
  if (raw.sum <= 0) return { reason: 'the markets\' prices sum to 0' };
  return {
    odds: { cut: clean(raw.cut / raw.sum), hold: clean(raw.hold / raw.sum), hike: clean(raw.hike / raw.sum), raw, markets: rows },
  };
}
