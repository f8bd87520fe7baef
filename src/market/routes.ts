// Interface B's routes, group by group. Each group module turns the shared context into route
// declarations; this list is the only place a new group is added.
import type { Config } from '../config.ts';
import type { RouteDef } from '../catalog/route.ts';
import type { Sources } from '../sources/index.ts';
import { orderbookRoutes } from './orderbook.ts';
import { priceRoutes } from './price.ts';
import { derivativesRoutes } from './derivatives.ts';
import { basisRoutes } from './basis.ts';

export interface MarketContext {
  sources: Sources;
  config: Config;
}

export function marketRoutes(ctx: MarketContext): RouteDef[] {
  return [
    ...priceRoutes(ctx),
    ...orderbookRoutes(ctx),
    ...derivativesRoutes(ctx),
    ...basisRoutes(ctx),
  ];
}
