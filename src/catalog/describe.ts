// A route's parameters and endpoint as the catalog outputs (/v1/status, llms.txt) describe them,
// read from its zod query schema: the same source OpenAPI uses, so the descriptions cannot drift.
import { z } from 'zod';
import { documentDefaults } from '../params/query.ts';
import { envelopeSchema } from './responses.ts';
import { examplePath, type CatalogEntry, type RouteDef } from './route.ts';

export interface ParamInfo {
  name: string;
  in: 'query';
  required: boolean;
  type: string;
  description: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

const described = new WeakMap<z.ZodObject, ParamInfo[]>();

/** Lists a route's query parameters from its zod schema (the same source OpenAPI uses); computed once per schema. */
export function describeParams(query: z.ZodObject | undefined): ParamInfo[] {
  if (!query) return [];
  let params = described.get(query);
  if (!params) described.set(query, (params = toParamInfo(query)));
  return params;
}

/** A JSON Schema (draft 2020-12) object, as zod writes it. */
export interface JsonSchemaObject {
  type?: string | string[];
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
  [keyword: string]: unknown;
}

/**
 * A route's query as JSON Schema (draft 2020-12, no `$schema`), with the documented defaults in place:
 * what the parameter lists and the x402 Bazaar declaration read, from the zod schema OpenAPI reads.
 */
export function queryJsonSchema(query: z.ZodObject | undefined): JsonSchemaObject {
  if (!query) return { type: 'object', properties: {} };
  const { $schema: _, ...json } = documentDefaults(z.toJSONSchema(query, { io: 'input', unrepresentable: 'any' })) as JsonSchemaObject;
  return json;
}

/**
 * A route's success body (the `{ data, meta }` envelope of its data schema) as one self-contained JSON
 * Schema (draft 2020-12, no `$schema`): the shared schemas (SourceMeta, ...) inlined, so it can be
 * embedded in another document.
 */
export function responseJsonSchema(def: RouteDef): JsonSchemaObject {
  const { $schema: _, $defs, ...json } = z.toJSONSchema(envelopeSchema(def.data), { io: 'output', unrepresentable: 'any' }) as JsonSchemaObject;
  const defs = ($defs ?? {}) as Record<string, unknown>;
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/$defs/')) return inline(defs[ref.slice('#/$defs/'.length)]);
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v)]));
  };
  return inline(json) as JsonSchemaObject;
}

function toParamInfo(query: z.ZodObject): ParamInfo[] {
  const json = queryJsonSchema(query);
  return Object.entries(json.properties ?? {}).map(([name, p]) => ({
    name,
    in: 'query' as const,
    required: (json.required ?? []).includes(name) && p.default === undefined,
    type: String(p.type ?? 'string'),
    description: String(p.description ?? ''),
    ...(p.default !== undefined ? { default: p.default } : {}),
    ...(Array.isArray(p.enum) ? { enum: p.enum } : {}),
    ...(typeof p.minimum === 'number' ? { minimum: p.minimum } : {}),
    ...(typeof p.maximum === 'number' ? { maximum: p.maximum } : {}),
  }));
}

/** An endpoint as the status routes list it. */
export const endpointSchema = z.object({
  method: z.literal('GET'),
  path: z.string(),
  summary: z.string(),
  description: z.string(),
  access: z.enum(['free', 'paid', 'key']).describe('free: no credentials; paid: an API key or an x402 payment; key: an API key, never charged'),
  price: z.string().nullable(),
  max_stale_s: z
    .number()
    .int()
    .nullable()
    .describe(
      'Seconds past its cache TTL an upstream answer may still be served at once (meta.sources says cached and its real age_s) while it is refreshed in the background; null: never served past its TTL',
    ),
  parameters: z.array(
    z.object({
      name: z.string(),
      in: z.literal('query'),
      required: z.boolean(),
      type: z.string(),
      description: z.string(),
      default: z.unknown().optional(),
      enum: z.array(z.unknown()).optional(),
      minimum: z.number().optional(),
      maximum: z.number().optional(),
    }),
  ),
  example: z.string(),
});

/** An endpoint as the status routes list it: path, words, access, parameters and a working example. */
export function describeEndpoint(e: CatalogEntry) {
  return {
    method: 'GET' as const,
    path: e.url,
    summary: e.def.summary,
    description: e.def.description,
    access: e.access,
    price: e.price,
    max_stale_s: e.maxStaleS,
    parameters: describeParams(e.def.query),
    example: examplePath(e),
  };
}
