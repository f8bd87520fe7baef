// What the generated OpenAPI document needs beyond the per-route schemas, applied once to the whole
// document (the route schemas go through @fastify/swagger, which cannot reference shared headers):
// - the response headers, declared once under components.headers and referenced by every response
//   that carries them;
// - `nullable` only beside a `type`: OpenAPI 3.0 applies it to the `type` of the same schema object,
//   so `{ nullable, anyOf: [...] }` would not accept null (zod writes that for a nullable union);
// - no component schema that nothing references (zod's registry also emits input variants of the
//   shared schemas, which only responses use);
// - each operation's real example answer (example-answers.json, written by npm run docs:examples);
// - integer bounds that say something: zod writes ±9007199254740991 (the safe integers) for every
//   .int() without bounds of its own, which Swagger UI shows as the example value of a 0–100 index.
//   Every integer an answer carries is a count, a size, an id, a block number or a time in seconds:
//   none is ever negative, so an answer's integer without bounds of its own is declared from 0, with no
//   maximum; one with real bounds (a 0–100 index) states them in its zod schema.

import exampleAnswers from './example-answers.json' with { type: 'json' };

type Json = Record<string, unknown>;

/** Every route's real answer to its documented example (npm run docs:examples), shown as its 200's example. */
const EXAMPLE_ANSWERS: Record<string, unknown> = exampleAnswers;

/** Every response header the server documents, by component name. */
export const RESPONSE_HEADERS = {
  RequestId: {
    description: "The request's id: the caller's own x-request-id when it sent a sane one, else one the server made. Every log line of the request carries it.",
    schema: { type: 'string' },
  },
  RetryAfter: { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
  RateLimitLimit: { description: 'Requests allowed per window in this bucket.', schema: { type: 'integer', minimum: 0 } },
  RateLimitRemaining: { description: 'Requests left in the current window.', schema: { type: 'integer', minimum: 0 } },
  RateLimitReset: { description: 'Seconds until the window resets.', schema: { type: 'integer', minimum: 0 } },
  PaymentRequired: {
    description:
      'x402 v2 payment requirements, base64-encoded JSON: `accepts` (scheme, network, amount in atomic units, asset, payTo), `resource`, and `extensions` ' +
      '(`bazaar`: this route\'s input and output schemas, for discovery catalogs; `payment-identifier`; and, when the server signs (x-x402.receipts), `offer-receipt`: a signed offer per `accepts` entry).',
    required: true,
    schema: { type: 'string' },
  },
  PaymentResponse: {
    description:
      'x402 v2 settlement result, base64-encoded JSON (success, transaction hash, network, payer): present when the call was paid with x402. ' +
      'When the server signs (x-x402.receipts), `extensions["offer-receipt"].info.receipt` is a signed receipt (JWS) whose protected header binds the Content-Digest of this answer.',
    schema: { type: 'string' },
  },
  ContentDigest: {
    description:
      'RFC 9530 Content-Digest of the exact bytes of this body (`sha-256=:<base64>:`): on an answer paid with x402 when the server signs receipts (x-x402.receipts); the receipt in PAYMENT-RESPONSE binds the same value.',
    schema: { type: 'string' },
  },
} as const;

const HEADER_NAME: Record<keyof typeof RESPONSE_HEADERS, string> = {
  RequestId: 'x-request-id',
  RetryAfter: 'Retry-After',
  RateLimitLimit: 'x-ratelimit-limit',
  RateLimitRemaining: 'x-ratelimit-remaining',
  RateLimitReset: 'x-ratelimit-reset',
  PaymentRequired: 'PAYMENT-REQUIRED',
  PaymentResponse: 'PAYMENT-RESPONSE',
  ContentDigest: 'Content-Digest',
};

/**
 * The headers of one response. Every answer carries x-request-id; a 429 the rate-limit headers;
 * every 503 Retry-After, and so does interface A's 502, which stands for 503 there (an operation
 * with a 502 and no 503); a 402 PAYMENT-REQUIRED; a paid success PAYMENT-RESPONSE and Content-Digest.
 */
function headersOf(status: string, operation: Json, statuses: string[]): (keyof typeof RESPONSE_HEADERS)[] {
  const names: (keyof typeof RESPONSE_HEADERS)[] = ['RequestId'];
  if (status === '429') names.push('RetryAfter', 'RateLimitLimit', 'RateLimitRemaining', 'RateLimitReset');
  if (status === '503' || (status === '502' && !statuses.includes('503'))) names.push('RetryAfter');
  if (status === '402') names.push('PaymentRequired');
  if (status === '200' && operation['x-access'] === 'paid') names.push('PaymentResponse', 'ContentDigest');
  return names;
}

export function finishDocument<T extends Json>(doc: T): T {
  const components = (doc.components ?? {}) as Json;
  components.headers = { ...(components.headers as Json), ...RESPONSE_HEADERS };
  for (const pathItem of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const operation of Object.values(pathItem) as Json[]) {
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      const statuses = Object.keys(responses);
      for (const [status, response] of Object.entries(responses)) {
        response.headers = Object.fromEntries(headersOf(status, operation, statuses).map((h) => [HEADER_NAME[h], { $ref: `#/components/headers/${h}` }]));
      }
    }
  }
  typeNullables(doc);
  for (const [path, pathItem] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const operation of Object.values(pathItem) as Json[]) {
      realIntegerBounds(operation.responses, false);
      // Swagger UI shows a media type's example as it is, instead of values it makes up from the schema
      // (9007199254740991 for an index, additionalProp1 in meta).
      const json = ((operation.responses as Record<string, Json> | undefined)?.['200']?.content as Record<string, Json> | undefined)?.['application/json'];
      if (json && EXAMPLE_ANSWERS[path] !== undefined) json.example = EXAMPLE_ANSWERS[path];
    }
  }
  realIntegerBounds(components.schemas, false);
  realIntegerBounds(doc.paths, true);
  dropUnusedSchemas(doc, components);
  return doc;
}

const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Drops zod's ±MAX_SAFE_INTEGER bounds, in place, everywhere; in answers (`parameters` false) an integer left
 * without a minimum is declared from 0 (see the top of this file).
 */
function realIntegerBounds(node: unknown, parameters: boolean): void {
  if (Array.isArray(node)) return node.forEach((n) => realIntegerBounds(n, parameters));
  if (node === null || typeof node !== 'object') return;
  const schema = node as Json;
  if (schema.type === 'integer') {
    if (schema.maximum === SAFE) delete schema.maximum;
    if (schema.minimum === -SAFE) {
      if (parameters) delete schema.minimum;
      else schema.minimum = 0;
    }
  }
  Object.values(schema).forEach((n) => realIntegerBounds(n, parameters));
}

/**
 * `{ nullable: true, anyOf: [A, B] }` → `{ anyOf: [A + nullable, B + nullable] }`, in place, everywhere; and a
 * nullable enum lists null among its values (OpenAPI 3.0.3: `nullable` does not widen an `enum`), so a real
 * answer's null validates (the example answers carry some).
 */
function typeNullables(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(typeNullables);
  if (node === null || typeof node !== 'object') return;
  const schema = node as Json;
  if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (schema.nullable === true && schema.type === undefined && branches) {
    delete schema.nullable;
    // anyOf: every branch may be null; oneOf: exactly one may, or null would match several.
    const nullable = schema.anyOf ? branches : branches.slice(0, 1);
    for (const b of nullable) if (b.type !== undefined) b.nullable = true;
  }
  Object.values(schema).forEach(typeNullables);
}

/** Removes component schemas that neither an operation nor another used schema references. */
function dropUnusedSchemas(doc: Json, components: Json): void {
  const schemas = (components.schemas ?? {}) as Json;
  const prefix = '#/components/schemas/';
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const ref = (node as Json).$ref;
    if (typeof ref === 'string' && ref.startsWith(prefix)) {
      const name = ref.slice(prefix.length);
      if (!used.has(name)) {
        used.add(name);
        visit(schemas[name]);
      }
    }
    Object.values(node).forEach(visit);
  };
  visit(doc.paths);
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}
