// marketgate/client: a typed client for marketgate's routes that pays per call with an API key or with x402,
// retries without paying twice, and never spends past its limit.
export { createClient, type Client, type ClosedChannel, type MarketgateClient } from './client.ts';
export type { CallResult, Payment, QueryInput } from './call.ts';
export { MarketgateError, chargedWords, type MarketgateErrorKind, type SentPayment } from './errors.ts';
export { parseAssets, parseNetworks, type ClientOptions } from './options.ts';
export type { Receipt, ReceiptKey } from './receipts.ts';
export type { BatchOptions, PaymentAsset } from './payer.ts';
export { solanaAddress, type SolanaSecretKey } from './solana-wallet.ts';
export { routeNames, type NameStyle } from './route-names.ts';
export type { Spending } from './spend.ts';
export type { QueryArgs, RouteEnvelope, RouteMethods, RouteName, RoutePath, RouteQuery } from './typed.ts';
export { ROUTES, type paths } from './openapi-types.ts';
