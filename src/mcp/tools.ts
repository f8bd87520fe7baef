// The MCP tools, made from the server's own OpenAPI document (never listed here): one per data route of both
// interfaces — every GET operation but the liveness, status and usage routes (the reference pages are not in
// the document) — named by route-names.ts in snake_case (`funding_oi`; on a collision the shorter path keeps
// the bare name and the others take their first segment: `risk_status`), described by the route's summary and
// its price and access, taking the route's query parameters as a JSON Schema with the required ones marked.
import { routeNames } from '../client/route-names.ts';

/** The parts of an OpenAPI 3 document the tools are made from. */
export interface OpenApiDocument {
  info?: { version?: string };
  paths?: Record<string, { get?: OpenApiOperation } | undefined>;
}

interface OpenApiOperation {
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: Record<string, unknown> }[];
  'x-access'?: string;
  'x-price'?: string;
  'x-payment-info'?: { price?: { amount?: string; currency?: string } };
}

export type Access = 'free' | 'paid' | 'key';

export interface ToolSpec {
  name: string;
  path: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, object>; required?: string[]; additionalProperties: false };
  access: Access;
  /** `$0.001` on a paid route. */
  price: string | undefined;
  /** Whether the server takes x402 payments for it (its operation carries x-payment-info). */
  x402: boolean;
}

/** Route kinds that describe the service rather than serve data. */
const NOT_DATA = new Set(['health', 'status', 'usage']);

/** OpenAPI 3.0 schema words that JSON Schema does not have. */
const OPENAPI_ONLY = new Set(['nullable', 'example', 'xml', 'externalDocs', 'discriminator', 'readOnly', 'writeOnly', 'deprecated']);

export function toolsFrom(doc: OpenApiDocument): ToolSpec[] {
  const routes = Object.entries(doc.paths ?? {}).flatMap(([path, item]) => {
    const op = item?.get;
    const last = path.split('/').filter(Boolean).at(-1) ?? '';
    return op && !NOT_DATA.has(last) ? [{ path, op }] : [];
  });
  const names = routeNames(
    routes.map((r) => r.path),
    'snake',
  );
  return routes.map(({ path, op }) => {
    const access: Access = op['x-access'] === 'paid' || op['x-access'] === 'key' ? op['x-access'] : 'free';
    const price = op['x-price'];
    const x402 = op['x-payment-info'] !== undefined;
    const title = op.summary ?? path;
    return { name: names.get(path)!, path, title, description: `${title}. ${accessText(access, price, x402)}`, inputSchema: inputSchema(op), access, price, x402 };
  });
}

export function accessText(access: Access, price: string | undefined, x402: boolean): string {
  if (access === 'free') return 'Access: free.';
  if (access === 'key') return 'Access: API key required; never charged.';
  const per = price ? `${price} per call` : 'per call';
  return x402 ? `Access: paid, ${per}, with an API key or x402.` : `Access: paid, ${per}, with an API key (this server takes no x402 payments).`;
}

function inputSchema(op: OpenApiOperation): ToolSpec['inputSchema'] {
  const params = (op.parameters ?? []).filter((p) => p.in === 'query');
  const properties = Object.fromEntries(params.map((p) => [p.name, { ...jsonSchema(p.schema ?? {}), ...(p.description ? { description: p.description } : {}) }]));
  const required = params.filter((p) => p.required).map((p) => p.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** A parameter's OpenAPI 3.0 schema as JSON Schema: `nullable` becomes a null type, OpenAPI's own words go. */
function jsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) if (!OPENAPI_ONLY.has(k)) out[k] = v;
  if (schema.nullable === true && typeof schema.type === 'string') out.type = [schema.type, 'null'];
  return out;
}
