// The payment table: what each paid route asks for, as the x402 SDK's RoutesConfig. Every paid route of the
// catalog is `GET <its URL>`, offering each scheme's `accepts` entry (scheme.ts: exact on Base first, then the
// others the settings and the facilitator allow), for its resource URL under the public base URL, with its Bazaar
// discovery declaration, the payment-identifier extension, and with X402_SIGNING_KEY the offer-receipt extension
// (offer-receipt.ts). An invalid declaration stops start-up.
import type { RoutesConfig } from '@x402/core/server';
import type { CatalogEntry } from '../../catalog/route.ts';
import { assertBazaarDeclarations, discoveryConfig } from './bazaar.ts';
import { PAYMENT_IDENTIFIER_DECLARATION } from './idempotency.ts';
import type { PaymentOption } from './scheme.ts';

export interface RouteTableOptions {
  /** What every paid route accepts, in order: one entry per scheme offered. */
  accepts: readonly PaymentOption[];
  publicBaseUrl: string;
  /** Signed offers and receipts (X402_SIGNING_KEY): the offer-receipt extension's declaration, on every route. */
  receipts?: Record<string, unknown>;
}

/** The SDK's payment table of `paidRoutes`; throws when a route's Bazaar declaration is invalid. */
export function paymentRoutes(paidRoutes: readonly CatalogEntry[], opts: RouteTableOptions): RoutesConfig {
  const routes: RoutesConfig = Object.fromEntries(
    paidRoutes.map((e) => {
      const discovery = discoveryConfig(e);
      return [
        `GET ${e.url}`,
        {
          accepts: opts.accepts.map((a) => ({ ...a })),
          resource: `${opts.publicBaseUrl}${e.url}`,
          description: e.def.summary,
          mimeType: 'application/json',
          ...discovery,
          extensions: { ...discovery.extensions, ...PAYMENT_IDENTIFIER_DECLARATION, ...opts.receipts },
        },
      ];
    }),
  );
  assertBazaarDeclarations(routes);
  return routes;
}
