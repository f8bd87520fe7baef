// What every route handler is given: the shared services, created once in buildApp.
import type { Config } from '../config.ts';
import type { UpstreamGuard } from '../http/guard.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ProviderInfo, Sources } from '../sources/index.ts';
import type { AccessSummary } from './access-summary.ts';
import type { RouteCatalog } from './route.ts';

export interface RouteContext {
  config: Config;
  sources: Sources;
  /** Health and breaker state of every provider (/v1/status). */
  guard: UpstreamGuard;
  /** The app's metrics (the no-op set when they are off): the hedged fallbacks report to it. */
  metrics: Metrics;
  providers: ProviderInfo[];
  catalog: RouteCatalog;
  /** How to authenticate and pay, as the reference outputs describe it. */
  access: AccessSummary;
  /** Epoch ms the app was built (uptime). */
  startedAt: number;
}
