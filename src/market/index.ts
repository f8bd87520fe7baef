// Interface B's routes, one file each. Adding an endpoint is one file and one line here.
import type { RouteDef } from '../catalog/route.ts';
import { healthRoute, marketStatus } from '../catalog/status.ts';
import { atr } from './atr.ts';
import { basis } from './basis.ts';
import { chainBalance } from './chain-balance.ts';
import { chainBlock } from './chain-block.ts';
import { chainEns } from './chain-ens.ts';
import { chainNonce } from './chain-nonce.ts';
import { chainTokenBalance } from './chain-token-balance.ts';
import { chainTx } from './chain-tx.ts';
import { earningsCalendar } from './earnings-calendar.ts';
import { fundingOi } from './funding-oi.ts';
import { fvg } from './fvg.ts';
import { liquidityLevelsRoute } from './liquidity-levels.ts';
import { longShortRatio } from './long-short-ratio.ts';
import { macroCalendar } from './macro-calendar.ts';
import { marketClockRoute } from './market-clock.ts';
import { momentumScoreRoute } from './momentum-score.ts';
import { ohlcv } from './ohlcv.ts';
import { orderbook } from './orderbook.ts';
import { perpdex } from './perpdex.ts';
import { predmktMarket } from './predmkt-market.ts';
import { predmktProbability } from './predmkt-probability.ts';
import { price } from './price.ts';
import { rates } from './rates.ts';
import { volatility } from './volatility.ts';
import { defiTvl } from './defi-tvl.ts';
import { sentiment } from './sentiment.ts';
import { marketOverview } from './market-overview.ts';
import { gas } from './gas.ts';

export const MARKET_ROUTES: readonly RouteDef[] = [
  healthRoute('market data', 'Reference'),
  marketStatus,
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
