// Symbol resolution shared by every market endpoint.
// Crypto: a base asset (`BTC`, `eth`) or a pair (`BTCUSDT`, `BTC-USD`, `BTC/USDT`).
// Equities/ETFs: a ticker (`AAPL`, `SPY`, `BRK.B`).
// Default rule (no asset_class): a pair form, or a base asset on the known crypto list, is crypto;
// anything else is an equity ticker. `asset_class` overrides the rule.
import { z } from 'zod';
import { BadRequestError } from '../http/errors.ts';

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
 * Base assets treated as crypto without asset_class. Chosen from the largest assets by market cap
 * that Binance lists; a ticker that is also a US stock symbol needs asset_class=equity.
 */
export const KNOWN_CRYPTO = new Set([
  'BTC', 'ETH', 'BNB', 'SOL', 'XRP', 'DOGE', 'ADA', 'TRX', 'AVAX', 'TON', 'DOT', 'LINK', 'MATIC', 'POL', 'SHIB',
  'LTC', 'BCH', 'UNI', 'ATOM', 'XLM', 'ETC', 'NEAR', 'APT', 'ARB', 'OP', 'FIL', 'ICP', 'HBAR', 'VET', 'INJ',
  'SUI', 'SEI', 'TIA', 'PEPE', 'WIF', 'BONK', 'RNDR', 'RENDER', 'AAVE', 'MKR', 'LDO', 'CRV', 'SNX', 'GRT', 'ALGO',
  'SAND', 'MANA', 'AXS', 'EOS', 'XTZ', 'FTM', 'S', 'HYPE', 'TAO', 'ENA', 'JUP', 'PYTH', 'WLD', 'STX', 'IMX',
  'KAS', 'XMR', 'ZEC', 'DASH', 'TRUMP', 'FET', 'ONDO', 'PENDLE', 'DYDX', 'GMX', 'RUNE', 'KSM', 'CAKE', '1INCH',
  'USDT', 'USDC', 'DAI', 'FDUSD',
]);

const CRYPTO_ASSET = /^[A-Z0-9]{1,15}$/;
const TICKER = /^[A-Z]{1,5}([.-][A-Z]{1,2})?$/;

export const ACCEPTED_SYMBOL =
  'a crypto base asset (BTC) or pair (BTCUSDT, BTC-USD, BTC/USDT), or a US equity/ETF ticker (AAPL, SPY, BRK.B)';

export const symbolParam = z
  .string({ error: (iss) => (iss.input === undefined ? `is required: ${ACCEPTED_SYMBOL}` : `must be ${ACCEPTED_SYMBOL}`) })
  .trim()
  .min(1, `must be ${ACCEPTED_SYMBOL}`)
  .max(24, `must be ${ACCEPTED_SYMBOL}`)
  .regex(/^[A-Za-z0-9.\-/]+$/, `must be ${ACCEPTED_SYMBOL}`)
  .describe(`Symbol: ${ACCEPTED_SYMBOL}. Case-insensitive.`);

export const assetClassParam = z
  .enum(['crypto', 'equity'], { error: () => 'must be one of crypto, equity' })
  .optional()
  .describe(
    'Settles ambiguity. Default: a pair, or a base asset on the known crypto list (BTC, ETH, SOL, ...), is crypto; anything else is an equity ticker.',
  );

export const ACCEPTED_CRYPTO_SYMBOL = 'a crypto base asset on the known list (BTC, ETH, SOL, ...) or a pair (BTCUSDT, BTC-USDT, BTC/USDT)';

/** Crypto-only endpoints take this parameter: a base asset or pair. */
export const cryptoSymbolParam = symbolParam.describe(
  `Crypto only: ${ACCEPTED_CRYPTO_SYMBOL}. Case-insensitive; the quote defaults to USDT. A base asset outside the known list must be written as a pair; equity tickers are refused.`,
);

/** Resolves a symbol. Throws a 400 naming `symbol` when it cannot be read as the requested class. */
export function parseSymbol(input: string, assetClass?: AssetClass): MarketSymbol {
  const s = input.trim().toUpperCase();
  const pair = splitPair(s);
  const cls: AssetClass = assetClass ?? (pair || KNOWN_CRYPTO.has(s) ? 'crypto' : 'equity');

  if (cls === 'crypto') {
    if (pair) return { assetClass: 'crypto', ...pair, explicitQuote: true };
    if (CRYPTO_ASSET.test(s)) return { assetClass: 'crypto', base: s, quote: 'USDT', explicitQuote: false };
    throw new BadRequestError(`query parameter 'symbol' must be a crypto base asset (BTC) or pair (BTCUSDT, BTC-USD); got '${input}'`);
  }
  if (TICKER.test(s)) return { assetClass: 'equity', ticker: s.replace('.', '-'), display: s };
  throw new BadRequestError(`query parameter 'symbol' must be a US equity/ETF ticker such as AAPL, SPY or BRK.B; got '${input}'`);
}

/**
 * Crypto only: a pair, or a base asset on the known list. Anything else would read as an equity
 * ticker (AAPL), so it is a 400 that says this endpoint takes crypto only, rather than a venue's 404.
 */
export function parseCryptoSymbol(input: string): CryptoSymbol {
  const s = input.trim().toUpperCase();
  if (splitPair(s) || KNOWN_CRYPTO.has(s)) return parseSymbol(input, 'crypto') as CryptoSymbol;
  throw new NotCryptoError(input);
}

/** The 400 of a crypto-only endpoint given something else. */
export class NotCryptoError extends BadRequestError {
  constructor(input: string) {
    const s = input.trim().toUpperCase();
    const hint = CRYPTO_ASSET.test(s) ? `; to ask for a crypto asset outside the known list, write a pair such as ${s}USDT` : '';
    super(`query parameter 'symbol' takes crypto only (${ACCEPTED_CRYPTO_SYMBOL}); '${input}' reads as an equity ticker${hint}`);
  }
}

function splitPair(s: string): { base: string; quote: string } | null {
  const sep = s.match(/^([A-Z0-9]{1,15})[-/]([A-Z0-9]{2,6})$/);
  if (sep) return { base: sep[1]!, quote: sep[2]! };
  for (const q of QUOTES) {
    if (s.length > q.length + 1 && s.endsWith(q)) {
      const base = s.slice(0, -q.length);
      // "BTCUSDT" is a pair; "ETH" alone ends in no quote; "AAVEUSD" splits but "USD" alone does not.
      if (CRYPTO_ASSET.test(base) && (KNOWN_CRYPTO.has(base) || q.length >= 4)) return { base, quote: q };
    }
  }
  return null;
}

/** Venue spellings. */
export const binancePair = (s: CryptoSymbol) => `${s.base}${s.quote}`;
/** Coinbase Exchange lists USD markets; a caller's USDT default maps to USD unless they asked for USDT. */
export const coinbaseProduct = (s: CryptoSymbol) => `${s.base}-${!s.explicitQuote && s.quote === 'USDT' ? 'USD' : s.quote}`;
