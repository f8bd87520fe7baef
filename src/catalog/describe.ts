// A route's parameters and endpoint as the catalog outputs (/v1/status, llms.txt) describe them,
// read from its zod query schema: the same source OpenAPI uses, so the descriptions cannot drift.
import { z } from 'zod';
import { documentDefaults } from '../params/query.ts';
import { examplePath, type CatalogEntry } from './route.ts';

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

function toParamInfo(query: z.ZodObject): ParamInfo[] {
  const json = documentDefaults(z.toJSONSchema(query, { io: 'input', unrepresentable: 'any' })) as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
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

/** An endpoint as the status routes list it: path, words, access, parameters and a working example. */
export function describeEndpoint(e: CatalogEntry) {
  return {
    method: 'GET' as const,
    path: e.url,
    summary: e.def.summary,
    description: e.def.description,
    access: e.access,
    price: e.price,
    parameters: describeParams(e.def.query),
    example: examplePath(e),
  };
}
