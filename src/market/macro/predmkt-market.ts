// /v1/predmkt-market: one Kalshi market's order book (bids on both sides, the asks they imply) and its
// recent trades.
import { z } from 'zod';
import { summariseBidsOnlyBook } from '../../analytics/prediction-markets.ts';
import { boundedInt, requiredString } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas } from '../../upstream/envelope.ts';
import { settledInOrder } from '../../lib/settled-in-order.ts';
import { numberOrNull } from '../../catalog/fields.ts';

const ACCEPTED_TICKER = "a Kalshi market ticker: letters, digits, '.', '_' and '-' (KXFEDDECISION-26OCT-H0)";

const query = z.object({
  ticker: requiredString(ACCEPTED_TICKER)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, `must be ${ACCEPTED_TICKER}`)
    .transform((v) => v.toUpperCase())
    .describe('A Kalshi market ticker, case-insensitive.'),
  depth: boundedInt(1, 100, 20, 'Book levels per side, 1-100 (fewer when Kalshi lists fewer).'),
  trades: boundedInt(1, 100, 20, 'Recent trades, 1-100.'),
});

const level = z.tuple([z.number().describe('price, dollars'), z.number().describe('size, contracts')]);

const data = z.object({
  ticker: z.string(),
  title: z.string().nullable().describe("The market's question"),
  yes_bids: z.array(level).describe('Bids to buy YES, best (highest) first'),
  no_bids: z.array(level).describe('Bids to buy NO, best (highest) first'),
  best_yes_bid: numberOrNull('Highest YES bid, dollars'),
  best_yes_ask: numberOrNull('1 − best NO bid: buying YES means selling NO to the best NO bidder. Kalshi books hold bids only'),
  best_no_ask: numberOrNull('1 − best YES bid'),
  spread: numberOrNull('best_yes_ask − best_yes_bid, dollars'),
  depth_yes: z.number().describe('Σ size of the YES bids listed, contracts'),
  depth_no: z.number().describe('Σ size of the NO bids listed, contracts'),
  trades: z
    .array(
      z.object({
        time: z.string().describe('ISO-8601 UTC'),
        side: z.string().nullable().describe('The taker\'s side: "yes" or "no"'),
        price: numberOrNull('The YES price of the trade, dollars (a NO taker paid 1 − price)'),
        size: numberOrNull('Contracts'),
      }),
    )
    .describe('Newest first'),
});

export const predmktMarket = defineRoute({
  path: '/v1/predmkt-market',
  summary: 'Order book and recent trades of a Kalshi market',
  description:
    'Kalshi lists bids only, on both sides: YES bids and NO bids. A NO bid at p is an offer to sell YES at 1 − p, so best_yes_ask = 1 − best NO bid ' +
    'and best_no_ask = 1 − best YES bid; spread = best_yes_ask − best_yes_bid. Prices are dollars per contract paying $1; sizes are contracts. ' +
    'Depth sums the sizes of the levels listed (`depth` per side). Trades are the newest first, priced in YES terms. An unknown ticker is a 404.',
  tag: 'Prediction markets',
  access: 'paid',
  maxStale: 'PREDICTION_MARKETS_STALE_S',
  query,
  data,
  example: { ticker: 'KXELONMARS-99' },
  handler: async (req, { sources }) => {
    const { ticker, depth, trades: tradeCount } = req.query;
    // The market call is the authority on existence: Kalshi answers an unknown ticker's book with an empty one.
    const [market, book, trades] = await settledInOrder([
      sources.kalshi.market(ticker),
      sources.kalshi.orderbook(ticker, depth),
      sources.kalshi.trades(ticker, tradeCount),
    ]);
    const summary = summariseBidsOnlyBook(book.data.yes, book.data.no, depth);
    return envelope(
      {
        ticker: market.data.ticker,
        title: market.data.title,
        yes_bids: summary.yes_bids,
        no_bids: summary.no_bids,
        best_yes_bid: summary.best_yes_bid,
        best_yes_ask: summary.best_yes_ask,
        best_no_ask: summary.best_no_ask,
        spread: summary.spread,
        depth_yes: summary.depth_yes,
        depth_no: summary.depth_no,
        trades: trades.data.map((t) => ({ time: t.time, side: t.taker_side, price: t.yes_price, size: t.count })),
      },
      mergeSourceMetas([market.meta, book.meta, trades.meta]),
    );
  },
});
