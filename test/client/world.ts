// The paid world the client and MCP tests run in: the in-process EDR chain with the test token (and, with
// `batch`, the batch-settlement contracts), a local facilitator, marketgate listening on 127.0.0.1 with x402
// on and an API key, and one fake upstream serving Binance's ticker (the paid /v1/price) and alternative.me's
// index (the free /v1/sentiment). A funded payer and the key are there for the tests to use.
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { mnemonicToAccount } from 'viem/accounts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_KEY_ENV } from '../helpers.ts';
import { deployBatchSettlement, deployFixtures, MNEMONIC, startLocalChain, type LocalChain } from '../payments/x402/chain.ts';
import { startFacilitator } from '../payments/x402/facilitator.ts';
import { paidEnv } from '../payments/x402/paying.ts';
import { LossyProxy } from './proxy.ts';

export const TICKER = '/api/v3/ticker/24hr';
export const FNG = '/fng/';
export const KEY = 'test-key';

export interface World {
  /** marketgate's URL. */
  base: string;
  app: FastifyInstance;
  chain: LocalChain;
  fx: Awaited<ReturnType<typeof deployFixtures>>;
  /** With `batch`: the batch-settlement contract's readers. */
  bs: Awaited<ReturnType<typeof deployBatchSettlement>> | undefined;
  fac: Awaited<ReturnType<typeof startFacilitator>>;
  /** With `facilitatorProxy`: what stands between marketgate and its facilitator. */
  facProxy: LossyProxy | undefined;
  /** The fake Binance (ticker) and alternative.me (index). */
  upstream: FakeUpstream;
  payTo: `0x${string}`;
  /** A payer holding 5 test tokens; its private key is what a user gives as `wallet`. */
  payer: ReturnType<typeof mnemonicToAccount>;
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
  const upstream = new FakeUpstream();
  await upstream.start();
  const serveNormally = () => {
    upstream.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
    upstream.route(`GET ${FNG}`, { body: recorded('alternativeme__fng.json') });
  };
  serveNormally();
  const chain = await startLocalChain(31337, options.batch ? { allowBlocksWithSameTimestamp: true } : {});
  const fx = await deployFixtures(chain);
  const bs = options.batch ? await deployBatchSettlement(chain) : undefined;
  const payerIndex = options.payerIndex ?? 7;
  const payer = mnemonicToAccount(MNEMONIC, { addressIndex: payerIndex });
  const payerKey = `0x${Buffer.from(payer.getHdKey().privateKey!).toString('hex')}` as const;
  await fx.mint(payer.address, 5_000_000n);
  const payTo = mnemonicToAccount(MNEMONIC, { addressIndex: 8 }).address;
  const fac = await startFacilitator({ chain: chain.chain, rpcUrl: chain.rpcUrl, network: chain.network, ...(options.batch ? { batch: { authorizerIndex: 4 } } : {}) });
  const facProxy = options.facilitatorProxy ? await new LossyProxy(fac.url).start() : undefined;
  const { app } = await makeApp({
    // The chain's RPC too: an outcome the facilitator does not tell (a settle answer lost) is read from the chain.
    ...paidEnv({ network: chain.network, asset: fx.usdc, payTo, facilitator: facProxy?.url ?? fac.url, exchange: upstream.url, rpcUrl: chain.rpcUrl }),
    ...TEST_KEY_ENV,
    ALTERNATIVE_ME_BASE_URL: upstream.url,
    DATA_DIR: await pgliteDataDir(),
    ...(options.batch ? { X402_BATCH_SETTLEMENT: 'true' } : {}),
    ...options.env,
  });
  await app.services.db.ready();
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
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
      await fac.close().catch(() => {});
      await chain.close();
      await upstream.stop();
      removeTempDirs();
    },
  };
}
