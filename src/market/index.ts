// Interface B's routes, one file each. Adding an endpoint is one file and one line here.
import type { RouteDef } from '../catalog/route.ts';
import { healthRoute, marketStatus } from '../catalog/status.ts';
import { basis } from './basis.ts';
import { fundingOi } from './funding-oi.ts';
import { longShortRatio } from './long-short-ratio.ts';
import { ohlcv } from './ohlcv.ts';
import { orderbook } from './orderbook.ts';
import { perpdex } from './perpdex.ts';
import { price } from './price.ts';
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
  volatility,
  defiTvl,
  sentiment,
  marketOverview,
  gas,
];
