// Interface B at the root: access control on paid routes, then every route group.
import type { FastifyPluginAsync } from 'fastify';
import { installAccessControl, type AccessControlOptions } from '../access/access-control.ts';
import { mountRoutes, type RouteCatalog } from '../catalog/route.ts';
import { marketRoutes, type MarketContext } from './routes.ts';

export interface MarketPluginOptions extends MarketContext {
  catalog: RouteCatalog;
  access: AccessControlOptions;
}

export const marketPlugin: FastifyPluginAsync<MarketPluginOptions> = async (app, opts) => {
  await installAccessControl(app, opts.access);
  mountRoutes(app, opts.catalog, 'market', marketRoutes(opts));
};
