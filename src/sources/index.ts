// The source registry: every upstream adapter, created once with the shared upstream client and
// cache. Later features (status, fault sweeps, circuit breakers) enumerate `providers` from here.
import type { Config } from '../config.ts';
import type { SourceDeps } from '../http/fetch-source.ts';
import { createGoPlus, GOPLUS } from './goplus.ts';

export interface ProviderInfo {
  /** The name used in `meta.sources[].provider` and `{ error, source }`. */
  name: string;
  /** Human name of the provider. */
  title: string;
  baseUrl: string;
}

export function createSources(deps: SourceDeps, config: Config) {
  const providers: ProviderInfo[] = [{ name: GOPLUS, title: 'GoPlus Security', baseUrl: config.goplus.baseUrl }];
  return {
    providers,
    goplus: createGoPlus(deps, { ...config.goplus, ttlS: config.risk.cacheTtlS }),
  };
}

export type Sources = ReturnType<typeof createSources>;
