// /v1/market-overview: the whole crypto market (CoinGecko /global) or its largest coins (CoinGecko /coins/markets).
import { z } from 'zod';
import { boundedInt, oneOf } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { derived, envelope } from '../../upstream/envelope.ts';
import { MARKETS_PAGE } from '../../sources/coingecko.ts';

const query = z.object({
  view: oneOf(['global', 'top'] as const, 'global', 'global: whole-market figures; top: the largest coins by market cap.'),
  limit: boundedInt(1, MARKETS_PAGE, 20, `view=top only: coins, 1-${MARKETS_PAGE}, largest market cap first.`),
});

const usd = (what: string) => z.number().nullable().describe(`${what}, USD`);
const pct = (what: string) => z.number().nullable().describe(`${what}, percent`);

const globalData = z.object({
  view: z.literal('global'),
  total_market_cap_usd: usd('Market cap of every coin CoinGecko tracks (total_market_cap.usd)'),
  total_volume_24h_usd: usd('Trading volume of the last 24 h (total_volume.usd)'),
  btc_dominance_pct: pct("Bitcoin's share of total_market_cap_usd (market_cap_percentage.btc)"),
  eth_dominance_pct: pct("Ether's share of total_market_cap_usd (market_cap_percentage.eth)"),
  market_cap_change_24h_pct: pct('Change of the total market cap over 24 h (market_cap_change_percentage_24h_usd)'),
  active_cryptocurrencies: z.number().int().nullable().describe('Coins CoinGecko tracks as active'),
  as_of: z.string().describe("CoinGecko's updated_at (it recomputes these figures every 10 minutes), ISO-8601 UTC"),
});

const topData = z.object({
  view: z.literal('top'),
  coins: z
    .array(
      z.object({
        rank: z.number().int().nullable().describe("CoinGecko's market-cap rank; null when it gives none"),
        symbol: z.string().describe('Ticker, upper-cased (BTC)'),
        name: z.string(),
        id: z.string().describe("CoinGecko's coin id (bitcoin)"),
        price_usd: usd('Current price (current_price)'),
        market_cap_usd: usd('Market cap (market_cap)'),
        volume_24h_usd: usd('Trading volume over 24 h (total_volume)'),
        change_24h_pct: pct('Price change over 24 h (price_change_percentage_24h)'),
      }),
    )
    .describe("Largest market cap first (CoinGecko's market_cap_desc order)"),
});

const data = z.discriminatedUnion('view', [globalData, topData]);

export const marketOverview = defineRoute({
  path: '/v1/market-overview',
  summary: 'Crypto market overview from CoinGecko: global figures or the top coins',
  description:
    'view=global: CoinGecko /global — total market cap and 24 h volume in USD, BTC and ETH dominance (percent of the total market cap), ' +
    'the 24 h change of the total market cap (percent) and the number of active coins. view=top: CoinGecko /coins/markets in USD, ' +
    `ordered by market cap, the first \`limit\` (1-${MARKETS_PAGE}) coins with price, market cap, 24 h volume and 24 h price change. ` +
    'Free: limited per client IP (FREE_RATE_LIMIT, 60/min by default).',
  tag: 'Market context',
  access: 'free',
  maxStale: 'MARKET_CONTEXT_STALE_S',
  query,
  data,
  example: { view: 'global' },
  handler: async (req, { sources }) => {
    if (req.query.view === 'global') {
      const got = await sources.coingecko.global();
      return envelope(derived(got.data, 'global', () => ({ view: 'global' as const, ...got.data })), [got.meta]);
    }
    const { limit } = req.query;
    const got = await sources.coingecko.topCoins();
    return envelope(derived(got.data, `top/${limit}`, () => ({ view: 'top' as const, coins: got.data.slice(0, limit) })), [got.meta]);
  },
});
