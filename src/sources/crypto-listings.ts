// Which base assets count as crypto when a symbol comes without asset_class: the ones Binance spot,
// Coinbase Exchange or Hyperliquid list, read from the venues themselves (through the guard, kept for
// CACHE_TTL_LISTINGS_S), on top of the shipped list (src/params/symbols.ts), which alone decides until
// a listing is loaded and stays the floor when a venue fails.
//
// A request never waits long for a listing: the first request that needs one (a base asset the shipped
// list does not settle) starts the load, and it and any other arriving before that load has settled wait
// for it at most FIRST_LOAD_WAIT_MS each, then go on with what is there. Once the first load has settled
// (loaded or failed) no request waits again: a listing older than its TTL is refreshed in the background
// while requests keep using the one in hand, and a venue that failed is asked again after RETRY_MS.
import { isShippedCrypto, type IsCryptoAsset } from '../params/symbols.ts';
import { BINANCE } from './binance-spot.ts';
import { COINBASE } from './coinbase.ts';
import { HYPERLIQUID } from './hyperliquid.ts';
import type { Sources } from './index.ts';
import { waitAtMost } from '../lib/wait-at-most.ts';

/** The longest a request waits for the first load of the listings before it uses the shipped list. */
export const FIRST_LOAD_WAIT_MS = 1000;
/** How long after a failed load a venue is asked again. */
export const RETRY_MS = 60_000;

export interface ListingVenue {
  /** Provider name (binance, coinbase, hyperliquid). */
  venue: string;
  /** How long a loaded listing is used before it is refreshed. */
  ttlMs: number;
  /** The venue's base assets or coin names, as it spells them. */
  load: () => Promise<string[]>;
}

/** One venue's listing as this process holds it. */
export interface ListingState {
  venue: string;
  /** Base assets held; 0 before the first successful load. */
  assets: number;
  loaded_at: string | null;
  /** The last load's error, when it failed (a listing loaded before is still used). */
  error: string | null;
}

interface Held {
  source: ListingVenue;
  assets: ReadonlySet<string> | null;
  loadedAt: number | null;
  attemptedAt: number | null;
  error: string | null;
}

/**
 * Hyperliquid names thousand-unit contracts with a lower-case k (kPEPE = 1000 PEPE): both KPEPE and
 * PEPE count as crypto. Everything else is compared upper-cased, as symbols are.
 */
export function listedNames(name: string): string[] {
  const upper = name.toUpperCase();
  return /^k[A-Z0-9]/.test(name) ? [upper, upper.slice(1)] : [upper];
}

export class CryptoListings {
  private readonly held: Held[];
  private refreshing: Promise<void> | null = null;
  /** The first load has settled (every venue loaded or failed once): from then on nothing waits. */
  private settledOnce = false;

  constructor(
    venues: readonly ListingVenue[],
    private readonly options: { firstWaitMs?: number; retryMs?: number; now?: () => number } = {},
  ) {
    this.held = venues.map((source) => ({ source, assets: null, loadedAt: null, attemptedAt: null, error: null }));
  }

  /** The listings of the three venues, each through its source (guarded, cached for CACHE_TTL_LISTINGS_S). */
  static fromSources(sources: Sources, ttlS: { binance: number; coinbase: number; hyperliquid: number }): CryptoListings {
    return new CryptoListings([
      { venue: BINANCE, ttlMs: ttlS.binance * 1000, load: async () => (await sources.binanceSpot.listedBaseAssets()).data },
      { venue: COINBASE, ttlMs: ttlS.coinbase * 1000, load: async () => (await sources.coinbase.listedBaseAssets()).data },
      { venue: HYPERLIQUID, ttlMs: ttlS.hyperliquid * 1000, load: async () => (await sources.hyperliquid.listedCoins()).data },
    ]);
  }

  /** Crypto per what is held now: the shipped list, or a listing of any venue. Never waits. */
  readonly isCrypto: IsCryptoAsset = (base) => isShippedCrypto(base) || this.held.some((h) => h.assets?.has(base) === true);

  /**
   * The predicate to decide with: starts a refresh when a listing is due (in the background); until
   * the first load has settled, waits for it at most `firstWaitMs`.
   */
  async predicate(): Promise<IsCryptoAsset> {
    const refresh = this.refreshIfDue();
    if (!this.settledOnce && refresh) await waitAtMost(refresh, this.options.firstWaitMs ?? FIRST_LOAD_WAIT_MS);
    return this.isCrypto;
  }

  /** What each venue's listing holds, for /v1/status-like diagnostics and tests. */
  state(): ListingState[] {
    return this.held.map((h) => ({
      venue: h.source.venue,
      assets: h.assets?.size ?? 0,
      loaded_at: h.loadedAt === null ? null : new Date(h.loadedAt).toISOString(),
      error: h.error,
    }));
  }

  /** The refresh in flight, or a new one of the venues due; null when none is due. */
  private refreshIfDue(): Promise<void> | null {
    if (this.refreshing) return this.refreshing;
    const now = this.now();
    const retryMs = this.options.retryMs ?? RETRY_MS;
    const due = this.held.filter(
      (h) => (h.loadedAt === null || now - h.loadedAt >= h.source.ttlMs) && (h.attemptedAt === null || now - h.attemptedAt >= retryMs),
    );
    if (due.length === 0) return null;
    const run = Promise.all(due.map((h) => this.load(h, now))).then(() => {
      this.refreshing = null;
      this.settledOnce = true;
    });
    this.refreshing = run;
    return run;
  }

  /** Loads one venue's listing; a failure keeps the listing held before (stale beats none) and is never thrown. */
  private async load(h: Held, now: number): Promise<void> {
    h.attemptedAt = now;
    try {
      const names = await h.source.load();
      h.assets = new Set(names.flatMap(listedNames));
      h.loadedAt = this.now();
      h.error = null;
    } catch (err) {
      h.error = err instanceof Error ? err.message : String(err);
    }
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
