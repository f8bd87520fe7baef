// The paid world the client and MCP tests run in: the in-process EDR chain with the test token (and, with
// `batch`, the batch-settlement contracts), a local facilitator, marketgate listening on 127.0.0.1 with x402
// on and an API key, and one fake upstream serving Binance's ticker (the paid /v1/price) and alternative.me's
// index (the free /v1/sentiment). A funded payer and the key are there for the tests to use.
import type { FastifyInstance } from 'fastify';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import type { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY_ENV } from '../helpers.ts';
import { listeningApp, paidWorldEnv, startPaidWorld, TICKER, type Account, type PaidWorld } from '../payments/world.ts';
import { LossyProxy } from './proxy.ts';

export { TICKER } from '../payments/world.ts';
export const FNG = '/fng/';
export const KEY = 'test-key';

export interface World {
  /** marketgate's URL. */
  base: string;
  app: FastifyInstance;
  chain: PaidWorld['chain'];
  fx: PaidWorld['fx'];
  /** With `batch`: the batch-settlement contract's readers. */
  bs: PaidWorld['bs'];
  fac: PaidWorld['fac'];
  /** With `facilitatorProxy`: what stands between marketgate and its facilitator. */
  facProxy: LossyProxy | undefined;
  /** The fake Binance (ticker) and alternative.me (index). */
  upstream: FakeUpstream;
  payTo: `0x${string}`;
  /** A payer holding 5 test tokens; its private key is what a user gives as `wallet`. */
  payer: Account;
  payerKey: `0x${string}`;
  /** The client's `assets` entry for the test token. */
  asset: { network: string; asset: string; decimals: number };
  /** The ticker and index served normally again (after a test changed them). */
  serveNormally(): void;
  close(): Promise<void>;
}

export interface WorldOptions {
  batch?: boolean;
  env?: Record<string, string>;
  /** Mnemonic index of the payer (each file may pick its own). */
  payerIndex?: number;
  /** Put a LossyProxy between marketgate and the facilitator (`facProxy`). */
  facilitatorProxy?: boolean;
}

export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const paid = await startPaidWorld({
    payerIndex: options.payerIndex ?? 7,
    payToIndex: 8,
    batch: options.batch,
    chain: options.batch ? { allowBlocksWithSameTimestamp: true } : {},
    facilitator: options.batch ? { batch: { authorizerIndex: 4 } } : {},
  });
  const { chain, fx, bs, fac, exchange: upstream, payer, payTo } = paid;
  const serveNormally = () => {
    paid.serveTicker();
    upstream.route(`GET ${FNG}`, { body: recorded('alternativeme__fng.json') });
  };
  serveNormally();
  const payerKey = `0x${Buffer.from(payer.getHdKey().privateKey!).toString('hex')}` as const;
  const facProxy = options.facilitatorProxy ? await new LossyProxy(fac.url).start() : undefined;
  const { app, base } = await listeningApp({
    // The chain's RPC too: an outcome the facilitator does not tell (a settle answer lost) is read from the chain.
    ...paidWorldEnv(paid, { rpc: true, facilitator: facProxy?.url }),
    ...TEST_KEY_ENV,
    ALTERNATIVE_ME_BASE_URL: upstream.url,
    DATA_DIR: await pgliteDataDir(),
    ...(options.batch ? { X402_BATCH_SETTLEMENT: 'true' } : {}),
    ...options.env,
  });
  return {
    base,
    app,
    chain,
    fx,
    bs,
    fac,
    facProxy,
    upstream,
    payTo,
    payer,
    payerKey,
    asset: { network: chain.network, asset: fx.usdc, decimals: 6 },
    serveNormally,
    async close() {
      await app.close();
      await facProxy?.stop();
      await paid.close();
      removeTempDirs();
    },
  };
}
