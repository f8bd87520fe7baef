// Symbol resolution shared by every market endpoint.
// Crypto: a base asset (`BTC`, `eth`) or a pair (`BTCUSDT`, `BTC-USD`, `BTC/USDT`).
// Equities/ETFs: a ticker (`AAPL`, `SPY`, `BRK.B`).
// Default rule (no asset_class): a pair, or a base asset that counts as crypto, is crypto; anything else
// is an equity ticker. What counts as crypto is a predicate the caller passes: in the routes, the venues'
// own listings (src/sources/crypto-listings.ts) on top of the shipped list below, which alone decides
// while the listings are not loaded. `asset_class` overrides the rule. Pure: no I/O here.
import { z } from 'zod';
import { BadRequestError } from '../lib/errors.ts';
import { enumParam } from './query.ts';

export type AssetClass = 'crypto' | 'equity';

export interface CryptoSymbol {
  assetClass: 'crypto';
  base: string;
  /** Quote asset; USDT when the caller gave only a base asset. */
  quote: string;
  /** The caller named the quote explicitly (a pair), so venues must not substitute it. */
  explicitQuote: boolean;
}

export interface EquitySymbol {
  assetClass: 'equity';
  /** Upper-case ticker as Yahoo spells it (class shares with a dash: BRK.B → BRK-B). */
  ticker: string;
  /** As the caller wrote it, upper-cased (BRK.B). */
  display: string;
}

export type MarketSymbol = CryptoSymbol | EquitySymbol;

/** Quote currencies whose amounts count as USD (stablecoins at face value). */
export const USD_QUOTES: ReadonlySet<string> = new Set(['USD', 'USDT', 'USDC', 'FDUSD', 'BUSD', 'TUSD']);

/** Quote assets recognised at the end of a pair written without a separator, longest first. */
export const QUOTES = ['FDUSD', 'USDT', 'USDC', 'BUSD', 'TUSD', 'USD', 'EUR', 'BTC', 'ETH'] as const;

/**
 * The shipped list: base assets that count as crypto without asset_class even before (or without) the
 * venues' listings. Chosen from the largest assets by market cap that Binance lists; a ticker that is
 * also a US stock symbol needs asset_class=equity.
 */
export const KNOWN_CRYPTO = new Set([
  'BTC', 'ETH', 'BNB', 'SOL', 'XRP', 'DOGE', 'ADA', 'TRX', 'AVAX', 'TON', 'DOT', 'LINK', 'MATIC', 'POL', 'SHIB',
  'LTC', 'BCH', 'UNI', 'ATOM', 'XLM', 'ETC', 'NEAR', 'APT', 'ARB', 'OP', 'FIL', 'ICP', 'HBAR', 'VET', 'INJ',
  'SUI', 'SEI', 'TIA', 'PEPE', 'WIF', 'BONK', 'RNDR', 'RENDER', 'AAVE', 'MKR', 'LDO', 'CRV', 'SNX', 'GRT', 'ALGO',
  'SAND', 'MANA', 'AXS', 'EOS', 'XTZ', 'FTM', 'S', 'HYPE', 'TAO', 'ENA', 'JUP', 'PYTH', 'WLD', 'STX', 'IMX',
  'KAS', 'XMR', 'ZEC', 'DASH', 'TRUMP', 'FET', 'ONDO', 'PENDLE', 'DYDX', 'GMX', 'RUNE', 'KSM', 'CAKE', '1INCH',
  'USDT', 'USDC', 'DAI', 'FDUSD',
]);

/** Whether a base asset (upper case) counts as crypto when no asset_class says. */
export type IsCryptoAsset = (base: string) => boolean;

/** The shipped list alone: what decides before the venues' listings are loaded. */
export const isShippedCrypto: IsCryptoAsset = (base) => KNOWN_CRYPTO.has(base);

const CRYPTO_ASSET = /^[A-Z0-9]{1,15}$/;
const TICKER = /^[A-Z]{1,5}([.-][A-Z]{1,2})?$/;

export const ACCEPTED_SYMBOL =
  'a crypto base asset (BTC) or pair (BTCUSDT, BTC-USD, BTC/USDT), or a US equity/ETF ticker (AAPL, SPY, BRK.B)';

// The symbols OpenAPI's patterns list: the forms read the same whatever the venues list. A ticker's shape
// (letters, an optional class: BRK.B), a pair with a separator, a base of two or more and a quote of four or
// five letters run together (BTCUSDT), upper case for the run-together quote. Lower case and the pairs with
// a three-letter quote run together (AAVEUSD: a pair only when the base is listed as crypto) are accepted
// too; the descriptions say so. A fuzzer drawing from the pattern so never sends a symbol that is a 400.
const PAIR_FORMS = '[A-Za-z0-9]{1,15}[-/][A-Za-z0-9]{2,6}';
const RUN_TOGETHER_FORMS = `[A-Za-z0-9]{2,15}(?:${QUOTES.filter((q) => q.length >= 4).join('|')})`;

export const symbolParam = z
  .string({ error: (iss) => (iss.input === undefined ? `is required: ${ACCEPTED_SYMBOL}` : `must be ${ACCEPTED_SYMBOL}`) })
  .trim()
  .min(1, `must be ${ACCEPTED_SYMBOL}`)
  .max(24, `must be ${ACCEPTED_SYMBOL}`)
  .regex(/^[A-Za-z0-9.\-/]+$/, `must be ${ACCEPTED_SYMBOL}`)
  .describe(`Symbol: ${ACCEPTED_SYMBOL}. Case-insensitive.`)
  .meta({ pattern: `^(?:[A-Za-z]{1,5}(?:[.-][A-Za-z]{1,2})?|${PAIR_FORMS}|${RUN_TOGETHER_FORMS})$` });

export const ASSET_CLASSES = ['crypto', 'equity'] as const;

export const assetClassParam = enumParam(ASSET_CLASSES)
  .optional()
  .describe(
    'crypto or equity, any case. Settles a symbol that could be either. Default: a pair, or a base asset listed by Binance, Coinbase Exchange or ' +
      'Hyperliquid (or on the shipped list of large assets: BTC, ETH, SOL, ...), is crypto; anything else is an equity ticker.',
  );

export const ACCEPTED_CRYPTO_SYMBOL = 'a crypto base asset (BTC, PEPE) or a pair (BTCUSDT, BTC-USDT, BTC/USDT)';

/** Crypto-only endpoints take this parameter: a base asset or pair. */
export const cryptoSymbolParam = symbolParam
  .describe(
    `Crypto only: ${ACCEPTED_CRYPTO_SYMBOL}. Case-insensitive; the quote defaults to USDT. Any well-formed base asset is asked of the venue: one it does not list is a 404 from it.`,
  )
  .meta({ pattern: `^[A-Za-z0-9]{1,15}(?:[-/][A-Za-z0-9]{2,6})?$` });

/**
 * Resolves a symbol. Throws a 400 naming `symbol` when it cannot be read as the requested class.
 * `isCrypto` decides a base asset alone, and whether `XYZUSD` is XYZ against USD (see splitPair).
 */
export function parseSymbol(input: string, assetClass?: AssetClass, isCrypto: IsCryptoAsset = isShippedCrypto): MarketSymbol {
  const s = input.trim().toUpperCase();
  const pair = splitPair(s, isCrypto);
  const cls: AssetClass = assetClass ?? (pair || (CRYPTO_ASSET.test(s) && isCrypto(s)) ? 'crypto' : 'equity');

  if (cls === 'crypto') {
    if (pair) return { assetClass: 'crypto', ...pair, explicitQuote: true };
    if (CRYPTO_ASSET.test(s)) return { assetClass: 'crypto', base: s, quote: 'USDT', explicitQuote: false };
    throw new BadRequestError(`query parameter 'symbol' must be a crypto base asset (BTC) or pair (BTCUSDT, BTC-USD); got '${input}'`);
  }
  if (TICKER.test(s)) return { assetClass: 'equity', ticker: s.replace('.', '-'), display: s };
  // Read as an equity only because no venue lists it as crypto: say how to ask the crypto venues anyway.
  const hint = assetClass === undefined && CRYPTO_ASSET.test(s) ? ' (no crypto venue lists it either; add asset_class=crypto to ask the crypto venues for it)' : '';
  throw new BadRequestError(`query parameter 'symbol' must be a US equity/ETF ticker such as AAPL, SPY or BRK.B; got '${input}'${hint}`);
}

/**
 * Crypto only: any well-formed base asset or pair. Nothing here can be an equity, so a base asset
 * nobody lists (NOPE) is asked of the venue, whose "unknown symbol" is the 404; only what cannot be a
 * crypto symbol at all (BRK.B) is a 400.
 */
export function parseCryptoSymbol(input: string, isCrypto: IsCryptoAsset = isShippedCrypto): CryptoSymbol {
  const s = input.trim().toUpperCase();
  if (splitPair(s, isCrypto) || CRYPTO_ASSET.test(s)) return parseSymbol(input, 'crypto', isCrypto) as CryptoSymbol;
  throw new BadRequestError(`query parameter 'symbol' takes crypto only: ${ACCEPTED_CRYPTO_SYMBOL}; got '${input}'`);
}

/**
 * A pair: BASE-QUOTE or BASE/QUOTE, or BASE and a known quote run together. A 4-letter-or-longer quote
 * (USDT, USDC, FDUSD, ...) always splits; a 3-letter one (USD, EUR, BTC, ETH) only when the base counts
 * as crypto (AAVEUSD is AAVE/USD; STETH stays one asset unless ST is listed).
 */
function splitPair(s: string, isCrypto: IsCryptoAsset): { base: string; quote: string } | null {
  const sep = s.match(/^([A-Z0-9]{1,15})[-/]([A-Z0-9]{2,6})$/);
  if (sep) return { base: sep[1]!, quote: sep[2]! };
  for (const q of QUOTES) {
    if (s.length > q.length + 1 && s.endsWith(q)) {
      const base = s.slice(0, -q.length);
      if (!CRYPTO_ASSET.test(base)) continue;
      if (q.length >= 4 || isCrypto(base)) return { base, quote: q };
    }
  }
  return null;
}

/** Venue spellings. */
export const binancePair = (s: CryptoSymbol) => `${s.base}${s.quote}`;
/** Coinbase Exchange lists USD markets; a caller's USDT default maps to USD unless they asked for USDT. */
export const coinbaseProduct = (s: CryptoSymbol) => `${s.base}-${!s.explicitQuote && s.quote === 'USDT' ? 'USD' : s.quote}`;
