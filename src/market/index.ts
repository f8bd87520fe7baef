// Interface B's routes, one file each. Adding an endpoint is one file and one line here.
import { keyUsage } from '../access/usage-route.ts';
import type { RouteDef } from '../catalog/route.ts';
import { healthRoute } from '../catalog/health.ts';
import { INTERFACE_VERSION } from '../lib/version.ts';
import { atr } from './analytics/atr.ts';
import { basis } from './derivatives/basis.ts';
import { chainBalance } from './onchain/chain-balance.ts';
import { chainBlock } from './onchain/chain-block.ts';
import { chainEns } from './onchain/chain-ens.ts';
import { chainNonce } from './onchain/chain-nonce.ts';
import { chainTokenBalance } from './onchain/chain-token-balance.ts';
import { chainTx } from './onchain/chain-tx.ts';
import { earningsCalendar } from './macro/earnings-calendar.ts';
import { fundingOi } from './derivatives/funding-oi.ts';
import { fvg } from './analytics/fvg.ts';
import { liquidityLevelsRoute } from './analytics/liquidity-levels.ts';
import { longShortRatio } from './derivatives/long-short-ratio.ts';
import { macroCalendar } from './macro/macro-calendar.ts';
import { marketClockRoute } from './macro/market-clock.ts';
import { momentumScoreRoute } from './analytics/momentum-score.ts';
import { ohlcv } from './exchange-data/ohlcv.ts';
import { orderbook } from './exchange-data/orderbook.ts';
import { perpdex } from './derivatives/perpdex.ts';
import { predmktMarket } from './macro/predmkt-market.ts';
import { predmktProbability } from './macro/predmkt-probability.ts';
import { price } from './exchange-data/price.ts';
import { rates } from './macro/rates.ts';
import { volatility } from './market-context/volatility.ts';
import { defiTvl } from './market-context/defi-tvl.ts';
import { sentiment } from './market-context/sentiment.ts';
import { marketStatus } from './status.ts';
import { marketOverview } from './market-context/market-overview.ts';
import { gas } from './market-context/gas.ts';

export const MARKET_ROUTES: readonly RouteDef[] = [
  healthRoute('market data', 'Reference', INTERFACE_VERSION.market),
  marketStatus,
  keyUsage,
  price,
  ohlcv,
  orderbook,
  fundingOi,
  longShortRatio,
  basis,
  perpdex,
  chainBalance,
  chainTokenBalance,
  chainNonce,
  chainBlock,
  chainTx,
  chainEns,
  predmktProbability,
  predmktMarket,
  macroCalendar,
  marketClockRoute,
  rates,
  earningsCalendar,
  atr,
  fvg,
  liquidityLevelsRoute,
  momentumScoreRoute,
  volatility,
  defiTvl,
  sentiment,
  marketOverview,
  gas,
];

/**
 * GET /v1: interface B's small index (what GET /risk is for interface A): what it is and the links to use it,
 * with one working example per family's first route rather than the whole list (/v1/status has that).
 */
export function marketIndex() {
  const example = (def: RouteDef) => (def.example ? `${def.path}?${new URLSearchParams(def.example)}` : def.path);
  return {
    name: 'marketgate market data',
    version: INTERFACE_VERSION.market,
    description: 'Market data for crypto and US equities: prices, candles, order books, derivatives, on-chain reads, macro calendars and analytics. Free routes need no credentials; the others take an API key or an x402 payment (/v1/status says which).',
    links: {
      status: marketStatus.path,
      health: '/health',
      usage: keyUsage.path,
      docs: '/docs',
      openapi: '/openapi.json',
      llms_txt: '/llms.txt',
      token_risk: '/risk',
      examples: [price, ohlcv, macroCalendar, gas].map(example),
    },
  };
}
