// /.well-known/agent.json: capabilities and authentication in the A2A agent-card shape.
// marketgate is a plain REST API: no streaming, push notifications, webhooks, JSON-RPC or tasks.
import type { AccessSummary } from '../catalog/access-summary.ts';
import { BAZAAR_TEXT, PAYMENT_IDENTIFIER_TEXT, RECEIPTS_TEXT } from './access-guide.ts';
import { EVM_CHAINS_TEXT } from '../risk/chains.ts';
import { INTERFACE_VERSION } from '../lib/version.ts';
import { examplePath, type CatalogEntry } from '../catalog/route.ts';

export function agentCard(entries: CatalogEntry[], baseUrl: string, access: AccessSummary) {
  return {
    name: 'marketgate',
    description:
      `Free token risk check (GoPlus signals and the token's chain → one 0-100 score, ${EVM_CHAINS_TEXT} + Solana) and a market-data REST API for crypto and US equities. ` +
      'Plain HTTPS GET endpoints returning JSON; no streaming, no push notifications, no webhooks, no JSON-RPC and no task endpoint.',
    url: baseUrl,
    version: INTERFACE_VERSION.market,
    documentationUrl: `${baseUrl}/docs`,
    provider: { organization: 'marketgate', url: baseUrl },
    capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
    supportsAuthenticatedExtendedCard: false,
    defaultInputModes: ['application/x-www-form-urlencoded'],
    defaultOutputModes: ['application/json'],
    securitySchemes: {
      apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: access.api_key.how_to_get },
      x402: {
        type: 'apiKey',
        in: 'header',
        name: 'PAYMENT-SIGNATURE',
        description: `x402 v2 pay-per-call, ${access.price} per paid call${access.x402.enabled ? '' : ' (not configured on this server)'}`,
        ...access.x402,
        // x402.receipts (the signing key's public part, or null) comes with the summary above.
        ...(access.x402.enabled
          ? { extensions: { 'payment-identifier': PAYMENT_IDENTIFIER_TEXT, bazaar: BAZAAR_TEXT, ...(access.x402.receipts ? { 'offer-receipt': RECEIPTS_TEXT } : {}) } }
          : {}),
      },
    },
    security: [{ apiKey: [] }, { x402: [] }],
    skills: entries.map((e) => ({
      id: e.url.replace(/^\//, '').replace(/[/.]/g, '-'),
      name: e.def.summary,
      description: e.def.description,
      tags: [e.def.tag, e.access],
      endpoint: `GET ${e.url}`,
      access: e.access,
      price: e.price,
      examples: [`${baseUrl}${examplePath(e)}`],
      inputModes: ['application/x-www-form-urlencoded'],
      outputModes: ['application/json'],
    })),
  };
}
