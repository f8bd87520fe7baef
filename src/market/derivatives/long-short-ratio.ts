// /v1/long-short-ratio: Binance's long/short ratios (all accounts, top traders by accounts and by
// positions) and taker buy/sell volume of a USD-M perpetual, the newest point and the history.
import { z } from 'zod';
import { toPct } from '../../analytics/derivatives.ts';
import { boundedInt, pickAlias, timeframeParam, X_DEFAULT } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas } from '../../upstream/envelope.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { settledInOrder } from '../../lib/settled-in-order.ts';
import { BINANCE_FUTURES, RATIO_PERIODS, type RatioPoint, type TakerPoint } from '../../sources/binance-futures.ts';
import { isoFromMs } from '../../sources/wire.ts';
import { binancePair, cryptoSymbolParam } from '../../params/symbols.ts';
import { resolveCryptoSymbol } from '../resolve-symbol.ts';
import { isoField } from '../../catalog/fields.ts';


const PERIOD_LIST = RATIO_PERIODS.join(', ');
const DEFAULT_PERIOD = '1h';

const query = z.object({
  symbol: cryptoSymbolParam,
  // `timeframe` is the name every route uses for a bucket length; `period` (Binance's name) was this
  // route's, and stays as an alias for existing clients.
  timeframe: timeframeParam(RATIO_PERIODS)
    .optional()
    .describe(`Bucket length of each ratio point: ${PERIOD_LIST}, any case. Default ${DEFAULT_PERIOD}. Binance serves the latest 30 days only.`)
    .meta({ [X_DEFAULT]: DEFAULT_PERIOD } as never),
  period: timeframeParam(RATIO_PERIODS).optional().describe('The older name of `timeframe`, still accepted; give one of the two.'),
  limit: boundedInt(1, 500, 30, 'Points of history per series, 1-500 (Binance\'s maximum), newest included.'),
});

const ratioRow = z.object({
  long_pct: z.number().describe('Binance longAccount × 100'),
  short_pct: z.number().describe('Binance shortAccount × 100'),
  ratio: z.number().describe('Binance longShortRatio, as sent'),
  time: isoField('Bucket time'),
});
const takerRow = z.object({
  buy_volume: z.number().describe('Taker buy volume, base-asset units'),
  sell_volume: z.number().describe('Taker sell volume, base-asset units'),
  ratio: z.number().describe('Binance buySellRatio, as sent'),
  time: isoField('Bucket time'),
});
const data = z.object({
  symbol: z.string().describe('BASE/QUOTE of the perpetual (BTC/USDT)'),
  venue_symbol: z.string().describe('Binance contract (BTCUSDT)'),
  venue: z.literal(BINANCE_FUTURES),
  timeframe: z.enum(RATIO_PERIODS).describe('Bucket length of each point'),
  period: z.enum(RATIO_PERIODS).describe('Same as timeframe; the older name, kept for existing clients'),
  global_accounts: ratioRow.nullable().describe('All accounts: share of accounts net long / net short (newest point)'),
  top_trader_accounts: ratioRow.nullable().describe('Top 20 % of traders by margin: share of accounts net long / short'),
  top_trader_positions: ratioRow.nullable().describe('Top 20 % of traders by margin: share of position size long / short'),
  taker: takerRow.nullable().describe('Taker buy vs sell volume over the newest bucket'),
  history: z.object({
    global_accounts: z.array(ratioRow),
    top_trader_accounts: z.array(ratioRow),
    top_trader_positions: z.array(ratioRow),
    taker: z.array(takerRow),
  }).describe('Each series oldest first; the last point is the one shown above'),
});


const toRatioRow = (p: RatioPoint) => ({ long_pct: toPct(p.long_fraction), short_pct: toPct(p.short_fraction), ratio: p.long_short_ratio, time: isoFromMs(p.time) });
const toTakerRow = (p: TakerPoint) => ({ buy_volume: p.buy_volume, sell_volume: p.sell_volume, ratio: p.buy_sell_ratio, time: isoFromMs(p.time) });

export const longShortRatio = defineRoute({
  path: '/v1/long-short-ratio',
  summary: 'Long/short ratios and taker volume of a Binance USD-M perpetual',
  description:
    'From Binance futures data: all accounts (globalLongShortAccountRatio), top traders by accounts (topLongShortAccountRatio) and by positions ' +
    '(topLongShortPositionRatio), each as long_pct/short_pct (Binance sends fractions such as 0.7069; here × 100 = 70.69) and Binance\'s ratio as sent; ' +
    'taker buy/sell volume (takerlongshortRatio, base-asset units). The newest point of each series, plus `history` oldest first. ' +
    'Binance serves the latest 30 days only.',
  tag: 'Derivatives',
  access: 'paid',
  maxStale: 'DERIVATIVES_STALE_S',
  query,
  data,
  example: { symbol: 'BTCUSDT', timeframe: '1h', limit: '30' },
  handler: async (req, { sources, cryptoListings }) => {
    const { limit } = req.query;
    const period = pickAlias({ name: 'timeframe', value: req.query.timeframe }, { name: 'period', value: req.query.period }, DEFAULT_PERIOD);
    const sym = await resolveCryptoSymbol(cryptoListings, req.query.symbol);
    const pair = binancePair(sym);
    const bf = sources.binanceFutures;
    const [global, topAccounts, topPositions, taker] = await settledInOrder([
      bf.longShortRatio('globalLongShortAccountRatio', pair, period, limit),
      bf.longShortRatio('topLongShortAccountRatio', pair, period, limit),
      bf.longShortRatio('topLongShortPositionRatio', pair, period, limit),
      bf.takerLongShortRatio(pair, period, limit),
    ]);
    if ([global, topAccounts, topPositions, taker].every((s) => s.data.length === 0)) {
      throw new NotFoundError(`${BINANCE_FUTURES} has no long/short data for '${pair}' at timeframe ${period}`, BINANCE_FUTURES);
    }
    const history = {
      global_accounts: global.data.map(toRatioRow),
      top_trader_accounts: topAccounts.data.map(toRatioRow),
      top_trader_positions: topPositions.data.map(toRatioRow),
      taker: taker.data.map(toTakerRow),
    };
    return envelope(
      {
        symbol: `${sym.base}/${sym.quote}`,
        venue_symbol: pair,
        venue: BINANCE_FUTURES,
        timeframe: period,
        period,
        global_accounts: history.global_accounts.at(-1) ?? null,
        top_trader_accounts: history.top_trader_accounts.at(-1) ?? null,
        top_trader_positions: history.top_trader_positions.at(-1) ?? null,
        taker: history.taker.at(-1) ?? null,
        history,
      },
      mergeSourceMetas([global.meta, topAccounts.meta, topPositions.meta, taker.meta]),
    );
  },
});
