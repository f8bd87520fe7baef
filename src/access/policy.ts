// The free/paid policy of interface B: one table. Every `/v1/*` route not listed here is paid;
// a paid route accepts an API key (x-api-key) or an x402 payment. Interface A is free.

/** Interface-B routes anyone may call without a key or a payment. */
export const FREE_ROUTES: ReadonlySet<string> = new Set([
  '/v1/status',
  '/v1/predmkt-probability',
  '/v1/sentiment',
  '/v1/market-overview',
  '/v1/gas',
  '/v1/macro-calendar',
]);

export type Access = 'free' | 'paid';

/** Price class of a served URL (base included). Non-/v1 paths are health and reference pages: free. */
export function accessOf(url: string): Access {
  if (url.startsWith('/risk/') || url === '/risk') return 'free';
  if (!url.startsWith('/v1/')) return 'free';
  return FREE_ROUTES.has(url) ? 'free' : 'paid';
}
