// The payment table: what each paid route asks for, as the x402 SDK's RoutesConfig. Every paid route of the
// catalog is `GET <its URL>`, offering `exact` at the price in the configured token (and batch-settlement beside
// it when the facilitator offers that), for its resource URL under the public base URL, with its Bazaar
// discovery declaration, the payment-identifier extension, and with X402_SIGNING_KEY the offer-receipt extension
// (offer-receipt.ts). An invalid declaration stops start-up.
import type { RouteConfig, RoutesConfig } from '@x402/core/server';
import type { CatalogEntry } from '../catalog/route.ts';
import { assertBazaarDeclarations, discoveryConfig } from './bazaar.ts';
import { PAYMENT_IDENTIFIER_DECLARATION } from './idempotency.ts';
import type { PaymentTerms } from './responses.ts';
import type { PaymentSettings } from './settings.ts';

type PaymentOption = Exclude<RouteConfig['accepts'], readonly unknown[]>;

export interface RouteTableOptions {
  x402: PaymentSettings;
  terms: PaymentTerms;
  publicBaseUrl: string;
  /** batch-settlement's `accepts` entry, offered after `exact`, when the facilitator offers it. */
  batch?: PaymentOption;
  /** Signed offers and receipts (X402_SIGNING_KEY): the offer-receipt extension's declaration, on every route. */
  receipts?: Record<string, unknown>;
}

/** The SDK's payment table of `paidRoutes`; throws when a route's Bazaar declaration is invalid. */
export function paymentRoutes(paidRoutes: readonly CatalogEntry[], opts: RouteTableOptions): RoutesConfig {
  const asset = opts.x402.asset!;
  const exact = (): PaymentOption => ({
    scheme: 'exact',
    network: opts.x402.network,
    payTo: opts.terms.payTo,
    price: { amount: opts.terms.amount, asset: asset.address, extra: { name: asset.name, version: asset.version } },
    maxTimeoutSeconds: opts.x402.maxTimeoutS,
  });
  const routes: RoutesConfig = Object.fromEntries(
    paidRoutes.map((e) => {
      const discovery = discoveryConfig(e);
      return [
        `GET ${e.url}`,
        {
          accepts: [exact(), ...(opts.batch ? [opts.batch] : [])],
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
