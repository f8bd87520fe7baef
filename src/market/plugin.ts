// Interface B at the root: access control on paid routes, then every route group.
import type { FastifyPluginAsync } from 'fastify';
import { installAccessControl, type AccessControlOptions } from '../access/access-control.ts';
import { mountRoutes, type RouteDef } from '../catalog/route.ts';
import { statusRoutes, type StatusContext } from '../catalog/status.ts';
import { marketRoutes, type MarketContext } from './routes.ts';

export interface MarketPluginOptions extends MarketContext {
  status: StatusContext;
  access: AccessControlOptions;
  extraRoutes: RouteDef[];
}

export const marketPlugin: FastifyPluginAsync<MarketPluginOptions> = async (app, opts) => {
  await installAccessControl(app, opts.access);
  mountRoutes(app, opts.status.catalog, 'market', [...statusRoutes(opts.status), ...marketRoutes(opts), ...opts.extraRoutes]);
};
