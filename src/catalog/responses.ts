// What a route's answers are, as OpenAPI documents them: the success envelope of its data, the 402 challenge
// of a paid route, and the errors it may answer with, each status with its words.
import { z } from 'zod';
import type { InterfaceName, RouteDef } from './route.ts';

/**
 * What x402 discovery (x402scan, @agentcash/discovery) reads from a paid operation: the price in USD and the
 * protocol, with the CAIP-2 networks it is paid on (Base, and Solana when offered).
 */
export function paymentInfo(price: string, networks: readonly { network: string }[] = []) {
  const ids = [...new Set(networks.map((n) => n.network))];
  return { price: { mode: 'fixed', amount: price.replace(/^\$/, ''), currency: 'USD' }, protocols: [{ x402: ids.length ? { networks: ids } : {} }] };
}

export const sourceMetaSchema = z
  .object({
    provider: z.string(),
    fetched_at: z.string().describe('ISO-8601 time the provider answered'),
    cached: z.boolean(),
    age_s: z.number().describe('Seconds since the provider answered'),
    error: z
      .string()
      .optional()
      .describe("Present when this source failed and the answer was made without it (token risk: the chain's RPC); fetched_at is then when it was tried"),
  })
  .meta({ id: 'SourceMeta', description: 'Where a number came from and how old it is' });

export const errorSchema = z
  .object({
    error: z.string().describe('Human-readable message'),
    source: z.string().optional().describe('Upstream provider that failed, when one did'),
  })
  .meta({ id: 'Error', description: 'Error body of every failure' });

/** The 402 body: the price in words beside the machine-readable PAYMENT-REQUIRED header. */
export const paymentRequiredSchema = z
  .object({
    error: z.string().describe('"payment required", or "payment rejected: <reason>"'),
    reason: z.string().optional().describe('Why a payment was rejected (replay, underpayment, expired, ...)'),
    price: z.string().describe('Price of one call, e.g. $0.001'),
    network: z.string().describe('CAIP-2 network id, e.g. eip155:8453'),
    asset: z.string().describe('Token contract paid in'),
    payTo: z.string().describe('Address that receives the payment'),
    networks: z.array(z.string()).describe('Every CAIP-2 network the call may be paid on, in the order of accepts (e.g. eip155:8453, then Solana when offered)'),
    accepts: z.array(z.object({}).loose()).describe('The x402 v2 payment requirements, as in the PAYMENT-REQUIRED header'),
  })
  .meta({ id: 'PaymentRequired', description: 'x402 payment challenge' });

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'A parameter is missing, malformed, out of bounds, given twice, or not one this operation takes; the message names it and what is accepted',
  401: 'Unknown or revoked API key; no credentials while x402 is not configured; or no API key on a route that needs one',
  404: 'Well-formed, but unknown to the source',
  429: 'Rate limited; see Retry-After',
  502: 'The upstream provider failed; `source` names it',
  503: 'Temporarily unavailable: the provider is paused after repeated failures or is limiting us, the payment facilitator is down, or the database is unavailable; `source` names it; see Retry-After',
};

export function envelopeSchema(data: z.ZodType) {
  return z.object({
    data,
    meta: z
      .object({
        timestamp: z.string().describe('ISO-8601 time of this response'),
        sources: z.array(sourceMetaSchema),
      })
      .loose(),
  });
}

/**
 * The error statuses a route documents. Interface A's published contract lists 400, 429 and 502 (a
 * provider limiting us or paused is a 502 there, with Retry-After); interface B adds 401 on paid
 * routes, 404 for what a source does not know, and 503 for "try again later".
 */
function errorStatuses(def: RouteDef, iface: InterfaceName): number[] {
  const limited = def.rateLimited !== false;
  if (iface === 'risk') return limited ? [400, 429, 502] : [400, 502];
  if (def.access === 'paid') return [400, 401, 404, 429, 502, 503];
  if (def.access === 'key') return [400, 401, 429, 503];
  return limited ? [400, 404, 429, 502, 503] : [400, 404, 502, 503];
}

/** Interface A's 502 covers "try again later" too: its contract has no 503. */
const RISK_502 = 'The upstream provider failed, is limiting us, or is paused after repeated failures (then with Retry-After); `source` names it';

/** The status codes a route documents; a 401 says how to get a key (`howToGetKey`, from OPERATOR_CONTACT). */
export function responses(def: RouteDef, iface: InterfaceName, howToGetKey: string) {
  const errors = errorStatuses(def, iface);
  const describe = (code: number) =>
    iface === 'risk' && code === 502 ? RISK_502 : code === 401 ? `${ERROR_DESCRIPTIONS[401]}. ${howToGetKey}` : ERROR_DESCRIPTIONS[code];
  const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });
  return {
    200: { description: 'Success', ...json(envelopeSchema(def.data)) },
    ...(def.access === 'paid' ? { 402: { description: 'Payment required: PAYMENT-REQUIRED header (x402 v2) and this body', ...json(paymentRequiredSchema) } } : {}),
    ...Object.fromEntries(errors.map((code) => [code, { description: describe(code), ...json(errorSchema) }])),
  };
}

