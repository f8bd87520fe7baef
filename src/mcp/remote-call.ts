// One tool call of the remote MCP server (`--http`), paid by its caller: the server holds no funds and no key.
// It calls the API through the typed client with what the caller gave — an API key (sent on the connection as
// x-api-key or a Bearer token, forwarded as x-api-key) or an x402 payment (the MCP transport of x402,
// specs/transports-v2/mcp.md in coinbase/x402: `_meta["x402/payment"]` forwarded as PAYMENT-SIGNATURE) — and
// answers as that transport says: a 402 is the payment-required result (isError, the API's PaymentRequired as
// structured content and as JSON text), a paid answer carries the settlement in `_meta["x402/payment-response"]`.
// The client resends the same headers on a retry, and the API's payment identifier answers the same payment once.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { createClient, MarketgateError } from '../client/index.ts';
import { describe, query } from './call-tool.ts';
import { toolError, type CallMeta } from './protocol.ts';
import type { ToolSpec } from './tools.ts';

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';

/** Who is calling, from the connection: the API key they sent, and their address (for the API's per-IP limits). */
export interface Caller {
  apiKey: string | undefined;
  ip: string | undefined;
}

export interface RemoteOptions {
  /** The API. */
  baseUrl: string;
  /** Send the caller's address as X-Forwarded-For (the API must trust this server's address as a proxy). */
  forwardIp: boolean;
  fetch?: typeof fetch;
}

export async function callRemote(o: RemoteOptions, caller: Caller, tool: ToolSpec, args: Record<string, unknown>, meta: CallMeta): Promise<CallToolResult> {
  const payment = meta?.[PAYMENT_META];
  let signature: string | undefined;
  if (payment !== undefined) {
    signature = paymentSignature(payment);
    if (!signature) return toolError(`_meta["${PAYMENT_META}"] must be an x402 PaymentPayload (x402Version, accepted, payload), as an x402 client makes it from this tool's payment-required result. Nothing was charged.`);
  }
  const extra: Record<string, string> = {};
  if (signature) extra['payment-signature'] = signature;
  if (o.forwardIp && caller.ip) extra['x-forwarded-for'] = caller.ip;
  let challenge: string | undefined;
  const base = o.fetch ?? globalThis.fetch;
  const fetchWith: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [k, v] of Object.entries(extra)) headers.set(k, v);
    const res = await base(input, { ...init, headers });
    if (res.status === 402) challenge = res.headers.get('payment-required') ?? undefined;
    return res;
  };
  const client = createClient({ baseUrl: o.baseUrl, ...(caller.apiKey ? { apiKey: caller.apiKey } : {}), fetch: fetchWith });
  try {
    const result = await client.request(tool.path, query(args));
    const envelope = result.envelope as Record<string, unknown>;
    const settle = settlement(result.headers.get('payment-response'));
    return { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope, ...(settle ? { _meta: { [PAYMENT_RESPONSE_META]: settle } } : {}) };
  } catch (err) {
    if (!(err instanceof MarketgateError)) return toolError(`the call failed: ${(err as Error)?.message ?? String(err)}. ${signature ? UNKNOWN : 'Nothing was charged.'}`);
    const required = err.status === 402 && challenge ? paymentRequired(challenge) : undefined;
    if (required) return { content: [{ type: 'text', text: JSON.stringify(required) }], structuredContent: required, isError: true };
    return toolError(signature ? describe(err, chargedWithPayment(err)) : describe(err));
  }
}

const UNKNOWN = `Whether it was charged is unknown: call again with the same _meta["${PAYMENT_META}"] to get the answer it paid for (the same payment is never charged twice).`;

/** What became of a payment sent with a call that failed: the API cancels it when its route fails; no answer, or a failure that is not the route's, leaves it open. */
function chargedWithPayment(err: MarketgateError): string {
  if (err.kind === 'network' || err.kind === 'timeout') return UNKNOWN;
  if (err.kind === 'receipt') return 'This call was charged.';
  if (err.status !== undefined && err.status >= 500 && (err.source === undefined || err.source === 'facilitator')) return UNKNOWN;
  return 'Nothing was charged.';
}

function paymentSignature(payment: unknown): string | undefined {
  const p = payment as Partial<PaymentPayload> | null;
  if (typeof p !== 'object' || p === null || Array.isArray(p) || typeof p.x402Version !== 'number' || typeof p.accepted !== 'object' || typeof p.payload !== 'object') return undefined;
  try {
    return encodePaymentSignatureHeader(p as PaymentPayload);
  } catch {
    return undefined;
  }
}

function paymentRequired(header: string): Record<string, unknown> | undefined {
  try {
    return decodePaymentRequiredHeader(header) as unknown as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function settlement(header: string | null): Record<string, unknown> | undefined {
  if (!header) return undefined;
  try {
    return decodePaymentResponseHeader(header) as unknown as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
