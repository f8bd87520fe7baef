// The source registry: every upstream adapter, created once with the shared upstream client and
// cache. Later features (status, fault sweeps, circuit breakers) enumerate `providers` from here.
import type { Config } from '../config.ts';
import type { SourceDeps } from '../http/fetch-source.ts';
import { createGoPlus, GOPLUS } from './goplus.ts';
import { BINANCE, createBinanceSpot } from './binance-spot.ts';
import { COINBASE, createCoinbase } from './coinbase.ts';
import { createKraken, KRAKEN } from './kraken.ts';
import { createYahoo, YAHOO } from './yahoo.ts';
import { BINANCE_FUTURES, createBinanceFutures } from './binance-futures.ts';
import { BYBIT, createBybit } from './bybit.ts';
import { createHyperliquid, HYPERLIQUID } from './hyperliquid.ts';

export interface ProviderInfo {
  /** The name used in `meta.sources[].provider` and `{ error, source }`. */
  name: string;
  /** Human name of the provider. */
  title: string;
  baseUrl: string;
}

export function createSources(deps: SourceDeps, config: Config) {
  const providers: ProviderInfo[] = [{ name: GOPLUS, title: 'GoPlus Security', baseUrl: config.goplus.baseUrl }];
  providers.push(
    { name: BINANCE, title: 'Binance (spot)', baseUrl: config.sources.binanceSpot },
    { name: COINBASE, title: 'Coinbase Exchange', baseUrl: config.sources.coinbase },
    { name: KRAKEN, title: 'Kraken', baseUrl: config.sources.kraken },
    { name: YAHOO, title: 'Yahoo Finance (chart API)', baseUrl: config.sources.yahoo },
  );
  providers.push(
    { name: BINANCE_FUTURES, title: 'Binance USD-M futures', baseUrl: config.sources.binanceFutures },
    { name: BYBIT, title: 'Bybit (v5, linear)', baseUrl: config.sources.bybit },
    { name: HYPERLIQUID, title: 'Hyperliquid (perpetuals)', baseUrl: config.sources.hyperliquid },
  );
  return {
    providers,
    goplus: createGoPlus(deps, { ...config.goplus, ttlS: config.risk.cacheTtlS }),
    binanceSpot: createBinanceSpot(deps, { baseUrl: config.sources.binanceSpot, ttl: config.ttl }),
    coinbase: createCoinbase(deps, { baseUrl: config.sources.coinbase, ttl: config.ttl }),
    kraken: createKraken(deps, { baseUrl: config.sources.kraken, ttl: config.ttl }),
    yahoo: createYahoo(deps, { baseUrl: config.sources.yahoo, ttl: config.ttl }),
    binanceFutures: createBinanceFutures(deps, { baseUrl: config.sources.binanceFutures, ttlS: config.ttl.derivatives }),
    bybit: createBybit(deps, { baseUrl: config.sources.bybit, ttlS: config.ttl.derivatives }),
    hyperliquid: createHyperliquid(deps, { baseUrl: config.sources.hyperliquid, ttlS: config.ttl.perpdex }),
  };
}

export type Sources = ReturnType<typeof createSources>;
