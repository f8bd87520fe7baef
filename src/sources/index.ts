// The source list: every upstream provider, one descriptor each. Adding a provider is one source
// file and one line here; config, the registry below, /v1/status, `.env.example`, the
// providers table (docs/using/providers.md) and the fault-sweep test all enumerate this list.
import { urlOrigin } from '../upstream/redact-url.ts';
import { sourceContext, type SourcePlumbing } from './define-source.ts';
import { binanceFuturesSource } from './binance-futures.ts';
import { binanceSpotSource } from './binance-spot.ts';
import { bybitSource } from './bybit.ts';
import { coinbaseSource } from './coinbase.ts';
import {
  rpcArbitrumSource,
  rpcAvalancheSource,
  rpcBaseSource,
  rpcBscSource,
  rpcEthereumSource,
  rpcFantomSource,
  rpcLineaSource,
  rpcOptimismSource,
  rpcPolygonSource,
  rpcScrollSource,
  rpcZksyncSource,
} from './evm-rpc.ts';
import { solanaRpcSource } from './solana-rpc.ts';
import { goplusSource } from './goplus.ts';
import { hyperliquidSource } from './hyperliquid.ts';
import { kalshiSource } from './kalshi.ts';
import { krakenSource } from './kraken.ts';
import { nasdaqSource } from './nasdaq.ts';
import { treasurySource } from './treasury.ts';
import { yahooSource } from './yahoo.ts';
import { deribitSource } from './deribit.ts';
import { defillamaSource } from './defillama.ts';
import { alternativeMeSource } from './alternative-me.ts';
import { coingeckoSource } from './coingecko.ts';
import { etherscanSource } from './etherscan.ts';

export const SOURCES = [
  goplusSource,
  binanceSpotSource,
  coinbaseSource,
  krakenSource,
  yahooSource,
  binanceFuturesSource,
  bybitSource,
  hyperliquidSource,
  rpcEthereumSource,
  rpcBaseSource,
  rpcArbitrumSource,
  rpcOptimismSource,
  rpcPolygonSource,
  rpcBscSource,
  rpcAvalancheSource,
  rpcFantomSource,
  rpcZksyncSource,
  rpcLineaSource,
  rpcScrollSource,
  solanaRpcSource,
  kalshiSource,
  treasurySource,
  nasdaqSource,
  deribitSource,
  defillamaSource,
  alternativeMeSource,
  coingeckoSource,
  etherscanSource,
] as const;

type Descriptors = (typeof SOURCES)[number];
type SettingsOf<D> = D extends { settings: (...args: never[]) => infer S } ? S : never;
type ApiOf<D> = D extends { create: (...args: never[]) => infer A } ? A : never;

/** Each source's settings, by key, as config.ts parsed them. */
export type SourceSettings = { [D in Descriptors as D['key']]: SettingsOf<D> };

/** Each source's adapter, by key: `sources.binanceSpot.ticker24h(...)`. */
export type Sources = { [D in Descriptors as D['key']]: ApiOf<D> };

/** What /v1/status and the docs say about a provider. */
export interface ProviderInfo {
  /** The name in `meta.sources[].provider` and `{ error, source }`. */
  name: string;
  title: string;
  /** The origin of the configured base URL: a key or login inside it is never shown. */
  baseUrl: string;
  docs: string;
  notes: string;
}

/** Creates every adapter once, each with its own guarded, cached context. */
export function createSources(settings: SourceSettings, plumbing: SourcePlumbing): Sources {
  const all = settings as Record<string, unknown>;
  return Object.fromEntries(
    SOURCES.map((d) => [d.key, (d.create as (ctx: unknown) => unknown)(sourceContext(d.name, all[d.key], plumbing))]),
  ) as Sources;
}

/** The variables of a source that hold an upstream URL (base URLs, RPC endpoints). */
export function urlVariables(source: (typeof SOURCES)[number]): string[] {
  return Object.entries(source.env as Record<string, { default: string | undefined }>)
    .filter(([, v]) => v.default?.startsWith('http'))
    .map(([name]) => name);
}

export function providerInfo(settings: SourceSettings): ProviderInfo[] {
  const all = settings as Record<string, { baseUrl: string }>;
  return SOURCES.map((d) => ({ name: d.name, title: d.title, baseUrl: urlOrigin(all[d.key]!.baseUrl), docs: d.docs, notes: d.notes }));
}
