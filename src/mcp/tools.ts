// The MCP tools, made from the server's own OpenAPI document (never listed here): one per data route of both
// interfaces — every GET operation but the liveness, status and usage routes (the reference pages are not in
// the document) — named by route-names.ts in snake_case (`funding_oi`; on a collision the shorter path keeps
// the bare name and the others take their first segment: `risk_status`), described by the route's summary and
// its price and access, taking the route's query parameters as a JSON Schema with the required ones marked, and
// declaring its answer (the envelope `{ data, meta }` of the route's 200) as its output schema. Every tool only
// reads, and a call with the same arguments (and the same payment) gives the same kind of answer: the
// annotations say so, and a paid tool's description says that resending a payment never charges twice.
import { routeNames } from '../client/route-names.ts';
import { toJsonSchema, type Components } from './json-schema.ts';

/** The parts of an OpenAPI 3 document the tools are made from. */
export interface OpenApiDocument {
  info?: { version?: string };
  paths?: Record<string, { get?: OpenApiOperation } | undefined>;
  components?: { schemas?: Components };
}

interface OpenApiOperation {
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: Record<string, unknown> }[];
  'x-access'?: string;
  'x-price'?: string;
  'x-payment-info'?: { price?: { amount?: string; currency?: string } };
  responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined>;
}

export type Access = 'free' | 'paid' | 'key';

export interface ToolSpec {
  name: string;
  path: string;
  title: string;
  description: string;
  inputSchema: InputSchema;
  /** The route's 200 answer, `{ data, meta }`, as JSON Schema. */
  outputSchema: { type: 'object'; [keyword: string]: unknown };
  annotations: { title: string; readOnlyHint: true; idempotentHint: true; openWorldHint: true };
  access: Access;
  /** `$0.001` on a paid route. */
  price: string | undefined;
  /** Whether the server takes x402 payments for it (its operation carries x-payment-info). */
  x402: boolean;
}

/** Route kinds that describe the service rather than serve data. */
const NOT_DATA = new Set(['health', 'status', 'usage']);

export interface InputSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties: false;
}

/** What a paid tool's description promises about retries (the server's payment identifier keeps it). */
export const RETRY_PROMISE = 'A retry with the same payment is never charged twice.';

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
    const retry = access === 'paid' && x402 ? ` ${RETRY_PROMISE}` : '';
    return {
      name: names.get(path)!,
      path,
      title,
      description: `${title}. ${accessText(access, price, x402)}${retry}`,
      inputSchema: inputSchema(op, doc.components?.schemas),
      outputSchema: outputSchema(op, doc.components?.schemas),
      annotations: { title, readOnlyHint: true, idempotentHint: true, openWorldHint: true },
      access,
      price,
      x402,
    };
  });
}

export function accessText(access: Access, price: string | undefined, x402: boolean): string {
  if (access === 'free') return 'Access: free.';
  if (access === 'key') return 'Access: API key required; never charged.';
  const per = price ? `${price} per call` : 'per call';
  return x402 ? `Access: paid, ${per}, with an API key or x402.` : `Access: paid, ${per}, with an API key (this server takes no x402 payments).`;
}

function inputSchema(op: OpenApiOperation, components: Components): InputSchema {
  const params = (op.parameters ?? []).filter((p) => p.in === 'query');
  const properties = Object.fromEntries(params.map((p) => [p.name, { ...toJsonSchema(p.schema ?? {}, components), ...(p.description ? { description: p.description } : {}) }]));
  const required = params.filter((p) => p.required).map((p) => p.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** The 200's JSON body; a route that declares none (or not an object) still answers an object: the envelope. */
function outputSchema(op: OpenApiOperation, components: Components): ToolSpec['outputSchema'] {
  const schema = op.responses?.['200']?.content?.['application/json']?.schema;
  const out = schema ? toJsonSchema(schema, components) : {};
  return out.type === 'object' ? (out as ToolSpec['outputSchema']) : { type: 'object', properties: { data: out }, required: ['data'] };
}
