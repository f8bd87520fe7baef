// The x402 terms of each paid operation in /openapi.json: `x-payment-info.protocols[].x402` carries, beside the
// networks, x402's own words for them: `{ x402Version, accepts, extensions }`, exactly the `accepts` entries the
// route's 402 states in PAYMENT-REQUIRED now (payments/core/published-terms.ts reads them from the payment table
// that serves), so a client that read the document pays its first call to a route with one request
// (marketgate/client's learnTerms, the MCP server). The shape is the discovery one (@agentcash/discovery's
// specification: `price` and `protocols: [{ x402: {...} }]`, whose protocol object is the protocol's own).
//
// The document is served as prebuilt bytes (prebuilt.ts); it is made again, whole, each time the terms are made
// (a payment table became ready: the facilitator's /supported answered, the offers changed), never per request.
// Until then a paid operation's x402 object names its networks only, and a client learns the terms from its
// first 402, as without them.
import type { RouteTerms } from '../payments/core/published-terms.ts';

type Json = Record<string, unknown>;

/**
 * `doc` with each paid operation's x402 terms in its x-payment-info. `doc` itself is left as it is (it is
 * @fastify/swagger's cached object): the path items and operations changed are copies.
 */
export function withPaymentTerms<T extends Json>(doc: T, terms: ReadonlyMap<string, RouteTerms> | undefined): T {
  if (!terms || terms.size === 0) return doc;
  const paths = { ...(doc.paths as Record<string, Json>) };
  for (const [url, route] of terms) {
    const item = paths[url];
    const operation = item?.get as Json | undefined;
    const info = operation?.['x-payment-info'] as { protocols?: Json[] } | undefined;
    if (!item || !operation || !info || !Array.isArray(info.protocols)) continue;
    const protocols = info.protocols.map((p) => (p.x402 ? { ...p, x402: { ...(p.x402 as Json), ...route } } : p));
    paths[url] = { ...item, get: { ...operation, 'x-payment-info': { ...info, protocols } } };
  }
  return { ...doc, paths };
}
