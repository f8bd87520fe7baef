// The typed surface, from the generated OpenAPI types: each route's query and envelope by its path, and one
// method per route named as ROUTES says (`client.price({ symbol: 'BTC' })`).
import type { paths, ROUTES } from './openapi-types.ts';

/** Every route path the server's OpenAPI document lists. */
export type RoutePath = keyof paths & string;

type Operation<P extends RoutePath> = paths[P]['get'];

/** A route's query parameters (never when it takes none). */
export type RouteQuery<P extends RoutePath> = NonNullable<Operation<P>['parameters']['query']>;

/** A route's success body: `{ data, meta }` with the route's own data. */
export type RouteEnvelope<P extends RoutePath> = Operation<P>['responses'][200]['content']['application/json'];

/** The query argument: required when the route has a required parameter, optional otherwise. */
export type QueryArgs<P extends RoutePath> = [RouteQuery<P>] extends [never]
  ? [query?: Record<string, never>]
  : Record<string, never> extends RouteQuery<P>
    ? [query?: RouteQuery<P>]
    : [query: RouteQuery<P>];

export type RouteName = keyof typeof ROUTES;

/** One method per route: its envelope, typed. */
export type RouteMethods = {
  [N in RouteName]: (...query: QueryArgs<(typeof ROUTES)[N]>) => Promise<RouteEnvelope<(typeof ROUTES)[N]>>;
};
