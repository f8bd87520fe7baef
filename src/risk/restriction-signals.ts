// The chain's signals from the trading-restriction simulations (issue 38; src/sources/token-restrictions.ts):
// a buy that never goes through, real holders who cannot sell, taxes raised in a later block, a cooldown
// between sells, and limits on a trade's size or a wallet's holding. Each is left out of the score (null)
// when the chain could not determine it; the gap says why (data-gaps.ts).
import type { EvmOnchain } from './onchain.ts';
import { SELL_BLOCKED_TAX_PCT, TAX_TOLERANCE } from './onchain-thresholds.ts';

type Reader = (o: EvmOnchain) => boolean | null;

/** Whether the chain's evidence names a gap for `signal` (it could not determine it). */
const gapFor = (o: EvmOnchain, signal: string) => o.gaps.some((g) => g.signal === signal);

/** The later simulation's sell failed or left nothing, or a tax rose by more than the tolerance; null when either side is unknown. */
export const taxRaisedLater: Reader = (o) => {
  const s = o.simulation;
  const later = s?.tax_later;
  if (!s || !later) return null;
  if (later.sell_ok === false && s.sell_ok === true) return true;
  if (laterSellBlocked(o) === true) return true;
  const rose = (now: number | null, then: number | null) => (now === null || then === null ? null : then - now > TAX_TOLERANCE * 100);
  const buy = rose(s.buy_tax_pct, later.buy_tax_pct);
  const sell = rose(s.sell_tax_pct, later.sell_tax_pct);
  return buy === true || sell === true ? true : buy === null && sell === null ? null : false;
};

/** The later simulation's sell failed or left nothing while the sell now goes through: a launch trap that closes sells. */
export const laterSellBlocked: Reader = (o) => {
  const s = o.simulation;
  const later = s?.tax_later;
  if (!s || !later || s.sell_ok !== true || later.sell_ok === null) return null;
  return later.sell_ok === false || (later.sell_tax_pct !== null && later.sell_tax_pct >= SELL_BLOCKED_TAX_PCT);
};

export const tradingDisabled: Reader = (o) => (o.simulation?.trading_enabled == null ? null : !o.simulation.trading_enabled);

/** Some of the real holders tried could not sell; null when none was tried. */
export const holdersCannotSell: Reader = (o) => {
  const s = o.simulation;
  if (!s || s.holders_tried == null || s.holders_sell_ok == null || s.holders_tried === 0) return null;
  return s.holders_sell_ok < s.holders_tried;
};

/** No holder of two or more tried could sell: real holders are trapped, whatever a fresh address can do. */
export const noHolderCanSell = (o: EvmOnchain) => (o.simulation?.holders_tried ?? 0) >= 2 && o.simulation?.holders_sell_ok === 0;

export const maxTxFound: Reader = (o) => (o.simulation?.max_tx === undefined || gapFor(o, 'max_tx') ? null : o.simulation.max_tx !== null);
export const maxWalletFound: Reader = (o) => (o.simulation?.max_wallet === undefined || gapFor(o, 'max_tx') || gapFor(o, 'max_wallet') ? null : o.simulation.max_wallet !== null);
export const cooldownFound: Reader = (o) => o.simulation?.cooldown ?? null;
