// One tool call: the route called through the client; the envelope back as JSON text and as structured content,
// or a tool error (isError) whose text is the API's error and source and says whether anything was charged.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { MarketgateError, type Client, type QueryInput } from '../client/index.ts';
import { toolError as failure } from './protocol.ts';
import { accessText, type ToolSpec } from './tools.ts';

export interface ToolContext {
  client: Client;
  /** Whether this process has an API key or a wallet for paid tools. */
  canPay: boolean;
}

export async function callTool(ctx: ToolContext, tool: ToolSpec, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
  if (tool.access !== 'free' && !ctx.canPay) {
    const how = tool.x402
      ? 'set MARKETGATE_API_KEY (an API key from the operator) or MARKETGATE_WALLET_KEY (a private key whose USDC pays per call with x402)'
      : 'set MARKETGATE_API_KEY (an API key from the operator; this server takes no x402 payments)';
    return failure(`${tool.name} is not free (${accessText(tool.access, tool.price, tool.x402)}) and this MCP server has no way to pay: ${how} in the environment of its mcpServers entry, then restart it. Nothing was charged.`);
  }
  try {
    const result = await ctx.client.request(tool.path, query(args));
    const envelope = result.envelope as Record<string, unknown>;
    return {
      content: [{ type: 'text', text: JSON.stringify(envelope) }],
      structuredContent: envelope,
      ...(result.payment
        ? { _meta: { 'marketgate/payment': { scheme: result.payment.scheme, network: result.payment.network, chargedUsd: result.payment.chargedUsd, identifier: result.payment.identifier, transaction: result.payment.settle.transaction } } }
        : {}),
    };
  } catch (err) {
    if (err instanceof MarketgateError) return failure(describe(err));
    return failure(`the call failed: ${(err as Error)?.message ?? String(err)}. Nothing was charged.`);
  }
}

/** Arguments as query parameters: scalars as they are, anything else as JSON (the server's 400 will name it). */
export function query(args: Record<string, unknown> | undefined): QueryInput {
  const out: QueryInput = {};
  for (const [k, v] of Object.entries(args ?? {})) out[k] = v === null || ['string', 'number', 'boolean'].includes(typeof v) ? (v as string | number | boolean | null) : JSON.stringify(v);
  return out;
}

/** The API's error as a tool error's text; `chargedText` when the caller knows better than the client what was paid. */
export function describe(err: MarketgateError, chargedText?: string): string {
  const status = err.status === undefined ? '' : `${err.status} `;
  const source = err.source ? ` (source: ${err.source})` : '';
  const charged =
    chargedText ??
    (err.charged === true
      ? `This call was charged${err.payment ? ` ($${err.payment.usd})` : ''}.`
      : err.charged === 'unknown'
        ? `Whether it was charged is unknown: a payment${err.payment ? ` of $${err.payment.usd}` : ''} was sent and no answer said what became of it.`
        : 'Nothing was charged.');
  const limit = err.kind === 'spend-limit' ? ' Raise MARKETGATE_MAX_SPEND_USD to allow more.' : '';
  return `marketgate ${err.path}: ${status}${err.error}${source}. ${charged}${limit}`;
}
