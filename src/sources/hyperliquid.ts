// Hyperliquid perpetuals (no key).
//   POST {base}/info  {"type":"metaAndAssetCtxs"}  →  [ {universe:[{name, szDecimals, maxLeverage, isDelisted?, ...}], ...},
//                                                       [ctx, ...] ]
// The same document lists the coins (universe[].name), so the crypto listings (listedCoins) read it too.
// Quirks: ctxs[i] belongs to universe[i] (aligned by index, no name inside a ctx); delisted coins stay
// in the list with isDelisted: true; ctx values are decimal strings; midPx, premium and impactPxs are
// null when the book is empty; coin names are case-sensitive (BTC, kPEPE). The call is a read, so
// it is safe to retry although it is a POST. One answer covers every coin, so it is cached once.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { TTL_ENV } from './ttls.ts';
import { optionalDecimal } from './wire.ts';

export const HYPERLIQUID = 'hyperliquid';

const assetSchema = z
  .object({ name: z.string(), szDecimals: z.number().optional(), maxLeverage: z.number().optional(), isDelisted: z.boolean().optional() })
  .loose();

const ctxSchema = z
  .object({
    funding: optionalDecimal,
    openInterest: optionalDecimal,
    prevDayPx: optionalDecimal,
    dayNtlVlm: optionalDecimal,
    premium: optionalDecimal,
    oraclePx: optionalDecimal,
    markPx: optionalDecimal,
    midPx: optionalDecimal,
    dayBaseVlm: optionalDecimal,
  })
  .loose();

const metaAndAssetCtxsSchema = z
  .tuple([z.object({ universe: z.array(assetSchema) }).loose(), z.array(ctxSchema)])
  .superRefine(([meta, ctxs], ctx) => {
    if (meta.universe.length !== ctxs.length) {
      ctx.addIssue({ code: 'custom', message: 'asset contexts not aligned with the universe', path: [1] });
    }
  });

export interface PerpAsset {
  /** Hyperliquid's coin name, as spelled there (BTC, kPEPE). */
  name: string;
  isDelisted: boolean;
  maxLeverage: number | null;
  ctx: {
    /** Current hourly funding rate. */
    funding: number | null;
    /** Base-asset units, as Hyperliquid reports it. */
    openInterest: number | null;
    prevDayPx: number | null;
    /** 24 h notional volume, USD(C). */
    dayNtlVlm: number | null;
    premium: number | null;
    oraclePx: number | null;
    markPx: number | null;
    midPx: number | null;
  };
}

export interface HyperliquidSettings {
  baseUrl: string;
  ttlS: number;
  /** How long the list of coins (listedCoins) is reused: the same document, read for its names only. */
  listingsTtlS: number;
}

const METAS_REQUEST = JSON.stringify({ type: 'metaAndAssetCtxs' });

function createHyperliquid(ctx: SourceContext<HyperliquidSettings>) {
  const options = ctx.settings;
  const metas = (ttlS: number) =>
    ctx.fetch({ url: `${options.baseUrl}/info`, method: 'POST', body: METAS_REQUEST, idempotent: true, schema: metaAndAssetCtxsSchema, ttlS });
  return {
    /** Every perpetual with its context, universe order. */
    async perpAssets(): Promise<Sourced<PerpAsset[]>> {
      const res = await metas(options.ttlS);
      const [meta, ctxs] = res.data;
      const assets = meta.universe.map((a, i): PerpAsset => {
        const c = ctxs[i]!;
        return {
          name: a.name,
          isDelisted: a.isDelisted === true,
          maxLeverage: a.maxLeverage ?? null,
          ctx: {
            funding: c.funding,
            openInterest: c.openInterest,
            prevDayPx: c.prevDayPx,
            dayNtlVlm: c.dayNtlVlm,
            premium: c.premium,
            oraclePx: c.oraclePx,
            markPx: c.markPx,
            midPx: c.midPx,
          },
        };
      });
      return { data: assets, meta: res.meta };
    },

    /**
     * The coins with a live perpetual, as Hyperliquid spells them (BTC, kPEPE), from the same
     * metaAndAssetCtxs document (one cache entry), reused for CACHE_TTL_LISTINGS_S.
     */
    async listedCoins(): Promise<Sourced<string[]>> {
      const res = await metas(options.listingsTtlS);
      return { data: res.data[0].universe.filter((a) => a.isDelisted !== true).map((a) => a.name), meta: res.meta };
    },
  };
}

export type Hyperliquid = ReturnType<typeof createHyperliquid>;

export const hyperliquidSource = defineSource({
  key: 'hyperliquid',
  name: HYPERLIQUID,
  title: 'Hyperliquid (perpetuals)',
  docs: 'https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/info-endpoint/perpetuals',
  notes: 'No key. 1200 weight/min per IP; metaAndAssetCtxs weighs 20 and covers every coin, so one cached answer serves all.',
  env: {
    HYPERLIQUID_BASE_URL: env.url('https://api.hyperliquid.xyz', 'Hyperliquid info API.'),
    CACHE_TTL_PERPDEX_S: TTL_ENV.CACHE_TTL_PERPDEX_S,
    CACHE_TTL_LISTINGS_S: TTL_ENV.CACHE_TTL_LISTINGS_S,
  },
  settings: (e) => ({ baseUrl: e.HYPERLIQUID_BASE_URL, ttlS: e.CACHE_TTL_PERPDEX_S, listingsTtlS: e.CACHE_TTL_LISTINGS_S }),
  create: createHyperliquid,
});
