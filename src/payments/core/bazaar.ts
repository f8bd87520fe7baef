// The x402 Bazaar discovery extension of each paid route (@x402/extensions/bazaar), derived from the
// route's declaration so it cannot drift from OpenAPI: the query parameters as JSON Schema (from the
// zod query schema, as /openapi.json, /v1/status and llms.txt read it) with the route's example query,
// and the success body as JSON Schema with a minimal example that validates against it (no route
// records an example answer, so the example shows the shape, never a made-up number). Catalogs such
// as the CDP Bazaar and x402scan index a resource only when its 402 carries this.
import { format } from 'node:util';
import { declareDiscoveryExtension, validateBazaarRouteExtensions } from '@x402/extensions/bazaar';
import type { RouteConfig, RoutesConfig } from '@x402/core/server';
import { queryJsonSchema, responseJsonSchema, type JsonSchemaObject } from '../../catalog/describe.ts';
import type { CatalogEntry } from '../../catalog/route.ts';
import { minimalExample } from '../../catalog/schema-example.ts';

export { bazaarResourceServerExtension } from '@x402/extensions/bazaar';

/** The name catalogs list the resources under. */
export const SERVICE_NAME = 'marketgate';

/** What a paid route's x402 route config adds for discovery: service name, tags and the Bazaar extension. */
export function discoveryConfig(e: CatalogEntry): Pick<RouteConfig, 'serviceName' | 'tags' | 'extensions'> {
  const inputSchema = queryJsonSchema(e.def.query);
  // The 402's PAYMENT-REQUIRED header carries all this, so the output schema goes compact (its words are
  // in /openapi.json); the input keeps its descriptions: they say how to call the route.
  const outputSchema = compact(responseJsonSchema(e.def));
  return {
    serviceName: SERVICE_NAME,
    tags: [e.def.tag],
    extensions: declareDiscoveryExtension({
      input: typedQuery(e.def.example ?? {}, inputSchema),
      inputSchema,
      output: { example: minimalExample(outputSchema), schema: outputSchema },
    }),
  };
}

/**
 * Stops start-up when a declaration is invalid: the SDK's own start-up check only warns on the
 * console (and the 402s would then go out without usable discovery), but an invalid declaration is
 * a defect in our route declarations.
 */
export function assertBazaarDeclarations(routes: RoutesConfig): void {
  const problems = consoleWarnings(() => validateBazaarRouteExtensions(routes));
  const entries: [string, RouteConfig][] = 'accepts' in routes ? [['*', routes as RouteConfig]] : Object.entries(routes);
  for (const [pattern, config] of entries) {
    if (!config.extensions?.bazaar) problems.push(`Route "${pattern}" has no bazaar extension`);
  }
  if (problems.length) throw new Error(`invalid x402 Bazaar discovery declarations (a defect in the route declarations):\n${problems.join('\n')}`);
}

/** The example query with its values typed as the schema says (limit=24 → 24): a query string is all strings, its schema is not. */
function typedQuery(example: Record<string, string>, schema: JsonSchemaObject): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(example).map(([name, value]) => {
      const type = schema.properties?.[name]?.type;
      if (type === 'integer' || type === 'number') return [name, Number(value)];
      if (type === 'boolean') return [name, value === 'true'];
      return [name, value];
    }),
  );
}

/**
 * The output schema as the 402 carries it, smaller: without descriptions (a field called "description"
 * maps to a schema object, not a string, and stays) and without the ±(2^53 − 1) bounds zod writes
 * for every integer, which say no more than `integer`.
 */
function compact(schema: JsonSchemaObject): JsonSchemaObject {
  return JSON.parse(JSON.stringify(schema), (key, value) => {
    if (key === 'description' && typeof value === 'string') return undefined;
    if ((key === 'minimum' || key === 'maximum') && Math.abs(value) === Number.MAX_SAFE_INTEGER) return undefined;
    return value;
  });
}

/** What `run` printed with console.warn (the SDK reports start-up problems only that way). */
function consoleWarnings(run: () => void): string[] {
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(format(...args));
  try {
    run();
  } finally {
    console.warn = warn;
  }
  return warnings;
}
