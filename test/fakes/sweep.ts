// The fault sweep's fixture per provider: one typical call of its adapter. The sweep test serves every
// fault for every provider of the source list through the app; a provider missing here fails it.
import { z } from 'zod';
import { defineRoute } from '../../src/catalog/route.ts';
import { envelope } from '../../src/http/envelope.ts';
import { BadRequestError } from '../../src/http/errors.ts';
import { upstreamCause } from '../../src/sources/define-source.ts';
import type { Sources } from '../../src/sources/index.ts';

export const SWEEP_CALLS: Record<string, (s: Sources) => Promise<unknown>> = {
  goplus: (s) => s.goplus.tokenSecurity({ chain: 1, address: '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c' }),
  binance: (s) => s.binanceSpot.ticker24h('BTCUSDT'),
  coinbase: (s) => s.coinbase.ticker('BTC-USD'),
  kraken: (s) => s.kraken.depth('XBTUSD', 10),
  yahoo: (s) => s.yahoo.quote('AAPL'),
  'binance-futures': (s) => s.binanceFutures.openInterest('BTCUSDT'),
  bybit: (s) => s.bybit.linearTicker('BTCUSDT'),
  hyperliquid: (s) => s.hyperliquid.perpAssets(),
  'rpc:ethereum': (s) => s.rpcEthereum.request('eth_blockNumber', []),
  'rpc:base': (s) => s.rpcBase.request('eth_blockNumber', []),
  'rpc:arbitrum': (s) => s.rpcArbitrum.request('eth_blockNumber', []),
  'rpc:optimism': (s) => s.rpcOptimism.request('eth_blockNumber', []),
  'rpc:polygon': (s) => s.rpcPolygon.client.getBlockNumber({ cacheTime: 0 }).catch((err) => Promise.reject(upstreamCause(err) ?? err)),
  deribit: (s) => s.deribit.historicalVolatility('BTC'),
  defillama: (s) => s.defillama.chains(),
  'alternative.me': (s) => s.alternativeMe.fearGreed(),
  coingecko: (s) => s.coingecko.global(),
  etherscan: (s) => s.etherscan.gasOracle(),
};

/** A test-only free route that makes one provider's sweep call. */
export const sweepRoute = defineRoute({
  path: '/v1/test-sweep',
  summary: 'Fault sweep probe',
  description: 'Test-only: calls one provider the way its adapter does.',
  tag: 'Test',
  access: 'free',
  query: z.object({ provider: z.string() }),
  data: z.object({ ok: z.literal(true) }),
  handler: async (req, ctx) => {
    const call = SWEEP_CALLS[req.query.provider];
    if (!call) throw new BadRequestError(`no sweep call for ${req.query.provider}`);
    await call(ctx.sources);
    return envelope({ ok: true as const }, []);
  },
});
