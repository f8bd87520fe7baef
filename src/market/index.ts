// Interface B's routes, one file each. Adding an endpoint is one file and one line here.
import type { RouteDef } from '../catalog/route.ts';
import { healthRoute, marketStatus } from '../catalog/status.ts';
import { atr } from './atr.ts';
import { basis } from './basis.ts';
import { fundingOi } from './funding-oi.ts';
import { fvg } from './fvg.ts';
import { liquidityLevelsRoute } from './liquidity-levels.ts';
import { longShortRatio } from './long-short-ratio.ts';
import { momentumScoreRoute } from './momentum-score.ts';
import { ohlcv } from './ohlcv.ts';
import { orderbook } from './orderbook.ts';
import { perpdex } from './perpdex.ts';
import { price } from './price.ts';

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
  atr,
  fvg,
  liquidityLevelsRoute,
  momentumScoreRoute,
];
