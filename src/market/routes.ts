// Interface B's routes, group by group. Each group module turns the shared context into route
// declarations; this list is the only place a new group is added.
import type { Config } from '../config.ts';
import type { RouteDef } from '../catalog/route.ts';
import type { Sources } from '../sources/index.ts';

export interface MarketContext {
  sources: Sources;
  config: Config;
}

export function marketRoutes(_ctx: MarketContext): RouteDef[] {
  return [
    // Route groups are listed here, e.g. ...priceRoutes(ctx)
  ];
}
