// The fault sweep's fixture per provider: one typical call of its adapter. The sweep test serves every
// fault for every provider of the source list through the app; a provider missing here fails it.
import { z } from 'zod';
import { defineRoute } from '../../src/catalog/route.ts';
import { envelope } from '../../src/upstream/envelope.ts';
import { BadRequestError } from '../../src/lib/errors.ts';
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
  'rpc:polygon': (s) => s.rpcPolygon.client().then((c) => c.getBlockNumber({ cacheTime: 0 })).catch((err) => Promise.reject(upstreamCause(err) ?? err)),
  'rpc:bsc': (s) => s.rpcBsc.request('eth_blockNumber', []),
  'rpc:avalanche': (s) => s.rpcAvalanche.request('eth_blockNumber', []),
  'rpc:fantom': (s) => s.rpcFantom.request('eth_blockNumber', []),
  'rpc:zksync': (s) => s.rpcZksync.request('eth_blockNumber', []),
  'rpc:linea': (s) => s.rpcLinea.request('eth_blockNumber', []),
  'rpc:scroll': (s) => s.rpcScroll.request('eth_blockNumber', []),
  'rpc:solana': (s) => s.rpcSolana.mint('Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr'),
  kalshi: (s) => s.kalshi.market('KXELONMARS-99'),
  treasury: (s) => s.treasury.yieldCurve(2026),
  nasdaq: (s) => s.nasdaq.earnings('2024-07-03'),
  deribit: (s) => s.deribit.historicalVolatility('BTC'),
  defillama: (s) => s.defillama.chains(),
  'alternative.me': (s) => s.alternativeMe.fearGreed(),
  coingecko: (s) => s.coingecko.global(),
  etherscan: (s) => s.etherscan.gasOracle(),
};

/**
 * Where a provider's format makes a fault read differently: Treasury serves CSV (read as text, not JSON),
 * so an HTML page is "HTML instead of CSV" and truncated JSON is simply not the CSV layout.
 */
export const SWEEP_EXPECTED: Record<string, Record<string, RegExp>> = {
  treasury: { 'answers an HTML page': /returned HTML instead of CSV/, 'answers truncated JSON': /unexpected response shape/ },
};

/** Variables a provider needs for the sweep beyond its URL: Treasury's own deadline, set to the sweep's. */
export const sweepEnv = (deadlineMs: number): Record<string, string> => ({ TREASURY_DEADLINE_MS: String(deadlineMs) });

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
