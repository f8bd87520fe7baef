// Paying a remote marketgate MCP tool with x402, as docs/using/mcp.md shows: an MCP client (the official
// @modelcontextprotocol/client) calls `price`; the server answers x402's payment-required result; the official
// x402 client signs a payment for it; the call is made again with the payment in `_meta["x402/payment"]`, and the
// answer comes with the settlement in `_meta["x402/payment-response"]`. A call whose answer is lost is made again
// with the same payment: the server answers it from the first, never charging twice.
//
//   MARKETGATE_MCP_URL=https://mcp.example.com/mcp MARKETGATE_WALLET_KEY=0x… node --import tsx examples/mcp-remote.ts
//
// MARKETGATE_ASSETS (network:address:decimals) allows a test network's token besides each network's USDC.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { privateKeyToAccount } from 'viem/accounts';

const url = new URL(process.env.MARKETGATE_MCP_URL ?? 'http://127.0.0.1:3100/mcp');
const signer = new x402Client();
registerExactEvmScheme(signer, { signer: privateKeyToAccount(process.env.MARKETGATE_WALLET_KEY as `0x${string}`) });
const [network, asset] = (process.env.MARKETGATE_ASSETS ?? '').split(/:(?=0x)|:(?=\d+$)/);
// At most $0.01 a payment (6 decimals) in the test token; the x402 client's own cap holds for USDC.
if (network && asset) signer.setSpendControls({ allowedAssets: [{ network: network as `${string}:${string}`, asset, maxAmountPerPayment: '10000' }] });

const mcp = new Client({ name: 'marketgate-example', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
await mcp.connect(new StreamableHTTPClientTransport(url));

const call = { name: 'price', arguments: { symbol: 'BTC' } };
let result = await mcp.callTool(call);
const required = result.isError ? (result.structuredContent as PaymentRequired | undefined) : undefined;
if (required?.x402Version && Array.isArray(required.accepts)) {
  const payment: PaymentPayload = await signer.createPaymentPayload(required);
  // An identifier makes the payment safe to send again: the server answers it once.
  if (required.extensions?.[PAYMENT_IDENTIFIER]) payment.extensions = appendPaymentIdentifierToExtensions(structuredClone(payment.extensions ?? {}), generatePaymentId());
  const paid = { ...call, _meta: { 'x402/payment': payment } };
  result = await mcp.callTool(paid).catch(() => mcp.callTool(paid)); // no answer: the same payment again
}
await mcp.close();
if (result.isError) throw new Error(JSON.stringify(result.content));
const { data } = result.structuredContent as { data: { symbol: string; price: number } };
const settlement = result._meta?.['x402/payment-response'] as { transaction: string; payer: string } | undefined;
console.log(JSON.stringify({ symbol: data.symbol, price: data.price, transaction: settlement?.transaction, payer: settlement?.payer }));
