// createClient: marketgate's routes as typed methods, over one call path (call.ts) that pays safely.
import { callRoute, routeUrl, type Caller, type CallResult, type QueryInput } from './call.ts';
import { AuthorizationChain } from './chain.ts';
import { MarketgateError } from './errors.ts';
import { ROUTES } from './openapi-types.ts';
import { resolveOptions, type ClientOptions } from './options.ts';
import { Payer } from './payer.ts';
import { publishedReceiptKey, type ReceiptKey } from './receipts.ts';
import { sameOriginFetch } from './redirects.ts';
import { SpendLimit, type Spending } from './spend.ts';
import { fromPaymentInfo, RouteTerms } from './terms.ts';
import type { QueryArgs, RouteEnvelope, RouteMethods, RoutePath } from './typed.ts';

export interface MarketgateClient {
  /** GET a route; resolves with its envelope `{ data, meta }`, rejects with a MarketgateError. */
  call<P extends RoutePath>(path: P, ...query: QueryArgs<P>): Promise<RouteEnvelope<P>>;
  call(path: string, query?: QueryInput): Promise<unknown>;
  /** As `call`, with how the answer came: status, request id, attempts, the payment and the answer's headers. */
  request<P extends RoutePath>(path: P, ...query: QueryArgs<P>): Promise<CallResult<RouteEnvelope<P>>>;
  request(path: string, query?: QueryInput): Promise<CallResult>;
  /** What this client has paid and holds against maxSpendUsd. */
  spending(): Spending;
  /**
   * Asks the chain (`rpcUrls`) about every payment held: one it shows used is spent; one unused once it has
   * expired is released. Done by itself when a payment would pass maxSpendUsd.
   */
  reconcile(): Promise<Spending>;
  /** The wallet's address, when it has one (the EVM wallet's when it has both). */
  readonly payer: string | undefined;
  /** The Solana wallet's address (base58), when it has one. */
  readonly solanaPayer: string | undefined;
  /** Asks for the unused batch-settlement deposit back (cooperative refund), through a paid route (`/v1/price?symbol=BTC`). */
  refund(path: string): Promise<{ success: boolean; amount?: string; transaction: string }>;
  /**
   * Done with the client: asks for the unused deposit of every batch-settlement channel it paid through back
   * (the cooperative refund; the payer can always withdraw it on chain after the channel's withdraw delay).
   * Resolves with one entry per channel refunded or failed; never rejects.
   */
  close(): Promise<ClosedChannel[]>;
  /**
   * Keeps the payment terms an OpenAPI document (marketgate's /openapi.json) declares in its operations'
   * `x-payment-info` (x402's `accepts`), so that the first call to each route is paid at once. Returns how many
   * routes had terms.
   */
  learnTerms(openapi: unknown): number;
}

/** A batch-settlement channel close() asked to refund: the refund's answer, or why it failed. */
export interface ClosedChannel {
  network: string;
  /** The paid route the refund was asked through. */
  url: string;
  refund?: { success: boolean; amount?: string; transaction: string };
  error?: string;
}

export type Client = MarketgateClient & RouteMethods;

export function createClient(options: ClientOptions): Client {
  const o = resolveOptions(options);
  const spend = new SpendLimit(o.maxSpendUsd);
  // The key and payments go to baseUrl's origin only: redirects elsewhere are not followed.
  const fetch = sameOriginFetch(o.fetch);
  const chain = new AuthorizationChain(o.rpcUrls, o.attemptTimeoutMs);
  const terms = new RouteTerms();
  const payer =
    o.account || o.solana
      ? new Payer({ account: o.account, solana: o.solana, prefer: o.prefer, rpcUrls: o.rpcUrls, spend, assets: o.assets, networks: o.networks, chain, batch: o.batch, fetch })
      : undefined;
  const headers: Record<string, string> = { accept: 'application/json', ...(o.apiKey ? { 'x-api-key': o.apiKey } : {}) };
  const caller: Caller = {
    baseUrl: o.baseUrl,
    headers,
    hasKey: o.apiKey !== undefined,
    fetch,
    retry: { retries: o.retries, attemptTimeoutMs: o.attemptTimeoutMs, minDelayMs: 100, maxDelayMs: 2000 },
    deadlineMs: o.deadlineMs,
    payer,
    spend,
    terms,
    receiptKey: receiptKeyOf(o.verifyReceipts, () => publishedReceiptKey(o.baseUrl, fetch, o.attemptTimeoutMs)),
  };
  const request = (path: string, query?: QueryInput) => callRoute(caller, path, query);
  const call = async (path: string, query?: QueryInput) => (await callRoute(caller, path, query)).envelope;
  const client: MarketgateClient = {
    call: call as MarketgateClient['call'],
    request: request as MarketgateClient['request'],
    spending: () => spend.snapshot(),
    async reconcile() {
      await payer?.reconcile();
      return spend.snapshot();
    },
    payer: payer?.address,
    solanaPayer: o.solana?.address,
    async refund(path) {
      if (!payer) throw new MarketgateError({ kind: 'config', path: 'wallet', error: 'a refund needs the wallet that deposited' });
      return payer.refund(routeUrl(o.baseUrl, path, undefined));
    },
    async close() {
      const done = (await payer?.refundAll()) ?? [];
      return done.map((d) => ({ network: d.network, url: d.url, ...(d.result ? { refund: d.result } : {}), ...(d.error ? { error: d.error } : {}) }));
    },
    learnTerms(openapi) {
      const paths = (openapi as { paths?: Record<string, { get?: { 'x-payment-info'?: unknown } }> } | null)?.paths;
      let learned = 0;
      for (const [path, item] of Object.entries(paths ?? {})) {
        const required = fromPaymentInfo(item?.get?.['x-payment-info'], `${o.baseUrl}${path}`);
        if (required) (terms.keep(path, required), learned++);
      }
      return learned;
    },
  };
  const methods = Object.fromEntries(Object.entries(ROUTES).map(([name, path]) => [name, (query?: QueryInput) => call(path, query)]));
  return Object.assign(client, methods) as unknown as Client;
}

/** The key receipts are verified against: the one given, or the server's published one, read once (again after a failure). */
function receiptKeyOf(verify: 'published' | ReceiptKey | undefined, published: () => Promise<ReceiptKey>): (() => Promise<ReceiptKey>) | undefined {
  if (verify === undefined) return undefined;
  if (verify !== 'published') return () => Promise.resolve(verify);
  let key: Promise<ReceiptKey> | undefined;
  return () => (key ??= published().catch((err: unknown) => ((key = undefined), Promise.reject(err))));
}

