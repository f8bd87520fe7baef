// What every route handler is given: the shared services, created once in buildApp.
import type { LimitCount } from '../access/rate-limit/rate-limit.ts';
import type { Config } from '../config.ts';
import type { AnswerMemo } from '../edge/answer-memo.ts';
import type { UsageCounter } from '../db/usage.ts';
import type { UpstreamGuard } from '../upstream/guard.ts';
import type { CryptoListings } from '../sources/crypto-listings.ts';
import type { CacheHoldings, Metrics } from '../metrics/metrics.ts';
import type { ProviderInfo, Sources } from '../sources/index.ts';
import type { AccessSummary } from './access-summary.ts';
import type { RouteCatalog } from './route.ts';
import type { BackendHealth } from '../lib/backend-health.ts';

export interface RouteContext {
  config: Config;
  sources: Sources;
  /** Which base assets the venues list as crypto (the default of a symbol without asset_class). */
  cryptoListings: CryptoListings;
  /** Health and breaker state of every provider (/v1/status). */
  guard: UpstreamGuard;
  /** The app's metrics (the no-op set when they are off): the hedged fallbacks report to it. */
  metrics: Metrics;
  providers: ProviderInfo[];
  catalog: RouteCatalog;
  /** How to authenticate and pay, as the reference outputs describe it. */
  access: AccessSummary;
  /** Answers served again while their sources are fresh (the cached path's fast lane; answer-memo.ts). */
  answers: AnswerMemo;
  /** Per-key usage (/v1/usage reads it). */
  usage: UsageCounter;
  /** A key's count in the rate limiter's current window for paid calls, without counting (/v1/usage). */
  keyMinute(keyId: string): Promise<LimitCount>;
  /** Health of the database, and of Redis when REDIS_URL is set (/v1/status). */
  backends: { database: BackendHealth; redis: BackendHealth | undefined };
  /** What the in-process caches hold now (/v1/status). */
  caches(): CacheHoldings;
  /** Epoch ms the app was built (uptime). */
  startedAt: number;
}
