// Query-parameter helpers shared by every route: zod pieces with messages that name what is
// accepted, and a plain description of a route's parameters for the catalog outputs.
import { z } from 'zod';
import { examplePath, type CatalogEntry } from './route.ts';

/**
 * A required string parameter whose error says what it accepts. The error handler prefixes
 * the parameter's name, so messages read "query parameter 'chain' is required: one of …".
 */
export function requiredString(accepted: string) {
  return z.string({ error: (iss) => (iss.input === undefined ? `is required: ${accepted}` : `must be ${accepted}`) });
}

/**
 * An integer parameter written as a plain decimal number (`limit=0x10` and `limit=1e2` are refused,
 * as are signs and fractions), from `min` to `max`, with a default. It shows as an integer with its
 * bounds and default in OpenAPI.
 */
export function boundedInt(min: number, max: number, def: number, description: string) {
  const accepted = `must be a whole number from ${min} to ${max}`;
  return z
    .string({ error: () => accepted })
    .regex(/^\d{1,9}$/, accepted)
    .transform(Number)
    .pipe(z.number().int().min(min, accepted).max(max, accepted))
    .default(def)
    .describe(description)
    // zod documents a transformed parameter by its input (a string); describe it as the integer it is.
    // zod drops `default` from transformed inputs, so it travels as x-default (see documentDefaults).
    .meta({ type: 'integer', minimum: min, maximum: max, pattern: undefined, [X_DEFAULT]: def } as never);
}

const X_DEFAULT = 'x-default';

/** Moves x-default (see boundedInt) to `default` in a JSON schema's properties, in place. */
export function documentDefaults<T>(schema: T): T {
  const props = (schema as { properties?: Record<string, Record<string, unknown>> } | null)?.properties;
  for (const p of Object.values(props ?? {})) {
    if (X_DEFAULT in p) {
      p.default = p[X_DEFAULT];
      delete p[X_DEFAULT];
    }
  }
  return schema;
}

/** One of a fixed list, case-sensitive as listed, with a default; the 400 lists them. */
export function oneOf<const V extends readonly [string, ...string[]]>(values: V, def: V[number], description: string) {
  return z
    .enum(values, { error: () => `must be one of ${values.join(', ')}` })
    .default(def)
    .describe(description);
}

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
