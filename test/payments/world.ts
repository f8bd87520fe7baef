// The x402 world the paid tests share: the in-process EDR chain with the 6-decimal EIP-3009 test token (and, on
// request, the batch-settlement contracts), a local facilitator, a fake exchange serving Binance's ticker (the paid
// /v1/price's upstream), a payer (funded with 5 tokens unless told otherwise) and a payee, each picked by its
// mnemonic index (each file its own, so files running at once never share a nonce). Beside it: the variables of a
// paid app over the world, an app listening on 127.0.0.1, a payment signed for a route but not sent yet, and a
// fetch that keeps the payments it sends.
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import type { x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { mnemonicToAccount } from 'viem/accounts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';
import { deployBatchSettlement, deployFixtures, MNEMONIC, startLocalChain, type LocalChain } from './x402/chain.ts';
import { startFacilitator, type FacilitatorOptions } from './x402/facilitator.ts';
import { paidEnv, type PaidSetting } from './x402/paying.ts';

/** The paid route the tests call: the real /v1/price, over the fake exchange. */
export const PRICE = '/v1/price?symbol=BTC';
/** Binance's ticker, as the fake exchange serves it. */
export const TICKER = '/api/v3/ticker/24hr';

export type Account = ReturnType<typeof mnemonicToAccount>;

/** The account at `index` of the test mnemonic. */
export const accountAt = (index: number): Account => mnemonicToAccount(MNEMONIC, { addressIndex: index });

export interface PaidWorldOptions {
  /** Mnemonic index of the payer and of the payee. */
  payerIndex: number;
  payToIndex: number;
  /** The payer's test tokens, atomic units (default 5 tokens; 0n: none). */
  fund?: bigint;
  /** Options of the local chain (a block every second at wall-clock time, blocks of one timestamp…). */
  chain?: Record<string, unknown>;
  /** Deploy the batch-settlement contracts too. */
  batch?: boolean;
  /** The facilitator's delays, and batch-settlement with its receiver authorizer. */
  facilitator?: Pick<FacilitatorOptions, 'delays' | 'batch' | 'svm'>;
  /** What the fake exchange answers on TICKER (default: the recorded BTCUSDT ticker, at once). */
  ticker?: Parameters<FakeUpstream['route']>[1];
}

export interface PaidWorld {
  chain: LocalChain;
  fx: Awaited<ReturnType<typeof deployFixtures>>;
  /** With `batch`: the batch-settlement contracts. */
  bs: Awaited<ReturnType<typeof deployBatchSettlement>> | undefined;
  fac: Awaited<ReturnType<typeof startFacilitator>>;
  exchange: FakeUpstream;
  payer: Account;
  payTo: `0x${string}`;
  /** The paid app's setting over this world; `rpc`: with the chain's JSON-RPC (X402_RPC_URL), where outcomes the facilitator did not tell are read. */
  setting(options?: { rpc?: boolean; facilitator?: string }): PaidSetting;
  /** The token balances of the payee and the payer. */
  balances(): Promise<{ payTo: bigint; payer: bigint }>;
  /** The recorded ticker served again (after a test changed it). */
  serveTicker(): void;
  close(): Promise<void>;
}

export async function startPaidWorld(o: PaidWorldOptions): Promise<PaidWorld> {
  const exchange = new FakeUpstream();
  await exchange.start();
  const serveTicker = () => exchange.route(`GET ${TICKER}`, o.ticker ?? { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
  serveTicker();
  const chain = await startLocalChain(31337, o.chain ?? {});
  const fx = await deployFixtures(chain);
  const bs = o.batch ? await deployBatchSettlement(chain) : undefined;
  const payer = accountAt(o.payerIndex);
  const payTo = accountAt(o.payToIndex).address;
  const fund = o.fund ?? 5_000_000n; // 5 tokens, 6 decimals
  if (fund > 0n) await fx.mint(payer.address, fund);
  const fac = await startFacilitator({ chain: chain.chain, rpcUrl: chain.rpcUrl, network: chain.network, ...o.facilitator });
  return {
    chain,
    fx,
    bs,
    fac,
    exchange,
    payer,
    payTo,
    setting: (options = {}) => ({
      network: chain.network,
      asset: fx.usdc,
      payTo,
      facilitator: options.facilitator ?? fac.url,
      exchange: exchange.url,
      ...(options.rpc ? { rpcUrl: chain.rpcUrl } : {}),
    }),
    balances: async () => ({ payTo: await fx.balanceOf(payTo), payer: await fx.balanceOf(payer.address) }),
    serveTicker,
    async close() {
      await fac.close().catch(() => {});
      await chain.close();
      await exchange.stop();
    },
  };
}

/** An app made with `env` (makeApp), its database open, listening on 127.0.0.1. */
export async function listeningApp(env: Record<string, string>): Promise<{ app: FastifyInstance; base: string }> {
  const { app } = await makeApp(env);
  await app.services.db.ready();
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

/**
 * A fetch for a paying client that changes the next paid request's payment before it is sent (`next(change)`: once),
 * and the status each changed one got.
 */
export function tamperingFetch(): { fetch: typeof fetch; next(change: (payload: PaymentPayload) => void): void; statuses: number[] } {
  let change: ((payload: PaymentPayload) => void) | undefined;
  const statuses: number[] = [];
  const tampering: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const header = req.headers.get('payment-signature');
    if (!header || !change) return fetch(req);
    const payload = decodePaymentSignatureHeader(header);
    change(payload);
    change = undefined;
    const headers = new Headers(req.headers);
    headers.set('payment-signature', encodePaymentSignatureHeader(payload));
    const res = await fetch(req.url, { headers });
    statuses.push(res.status);
    return res;
  };
  return { fetch: tampering, next: (c) => void (change = c), statuses };
}

/** The variables of a paid app over `world` (paidEnv): its token, payee, facilitator and fake exchange. */
export const paidWorldEnv = (world: PaidWorld, options: { rpc?: boolean; facilitator?: string; timeoutMs?: number } = {}) =>
  paidEnv(world.setting(options), options.timeoutMs);

export interface SignOptions {
  /** The route paid for (PRICE by default). */
  path?: string;
  /** Sign an authorization that expires sooner than the 402 offers; what the payment says it accepted is the 402's, unchanged. */
  validForS?: number;
  /** Changes the payload before it is encoded. */
  edit?: (payload: PaymentPayload) => void;
}

/** A payment for `path` at `base`, signed by `client` from the route's own 402 challenge, not sent yet. */
export async function signPayment(base: string, client: x402Client, options: SignOptions = {}): Promise<string> {
  const challenge = await fetch(`${base}${options.path ?? PRICE}`);
  const required: PaymentRequired = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);
  const offered = required.accepts[0]!;
  if (!options.validForS) return encode(await client.createPaymentPayload(required), options);
  // The authorization is signed for the shorter window; what the payment says it accepted is the 402's, unchanged.
  const payload = await client.createPaymentPayload({ ...required, accepts: [{ ...offered, maxTimeoutSeconds: options.validForS }] });
  payload.accepted = offered;
  return encode(payload, options);
}

function encode(payload: PaymentPayload, options: SignOptions): string {
  options.edit?.(payload);
  return encodePaymentSignatureHeader(payload);
}

/** A fetch that keeps every PAYMENT-SIGNATURE it sends in `sent`. */
export function recordingFetch(sent: string[]): typeof fetch {
  return async (input, init) => {
    const req = new Request(input as string | URL | Request, init);
    const signature = req.headers.get('payment-signature');
    if (signature) sent.push(signature);
    return fetch(req);
  };
}
