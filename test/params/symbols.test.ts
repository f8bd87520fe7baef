// The symbol rules (src/params/symbols.ts): the default asset class, crypto-only symbols, Coinbase's products.
import { describe, expect, it } from 'vitest';
import { coinbaseProduct, parseCryptoSymbol, parseSymbol } from '../../src/params/symbols.ts';

describe('parseSymbol (the default asset-class rule)', () => {
  it.each([
    ['BTC', { assetClass: 'crypto', base: 'BTC', quote: 'USDT', explicitQuote: false }],
    ['eth', { assetClass: 'crypto', base: 'ETH', quote: 'USDT', explicitQuote: false }],
    ['BTCUSDT', { assetClass: 'crypto', base: 'BTC', quote: 'USDT', explicitQuote: true }],
    ['btc-usd', { assetClass: 'crypto', base: 'BTC', quote: 'USD', explicitQuote: true }],
    ['SOL/USDC', { assetClass: 'crypto', base: 'SOL', quote: 'USDC', explicitQuote: true }],
    ['AAPL', { assetClass: 'equity', ticker: 'AAPL', display: 'AAPL' }],
    ['brk.b', { assetClass: 'equity', ticker: 'BRK-B', display: 'BRK.B' }],
    ['SPY', { assetClass: 'equity', ticker: 'SPY', display: 'SPY' }],
  ])('%s', (input, expected) => expect(parseSymbol(input)).toEqual(expected));

  it('asset_class overrides the rule', () => {
    expect(parseSymbol('SOL', 'equity')).toEqual({ assetClass: 'equity', ticker: 'SOL', display: 'SOL' });
    expect(parseSymbol('AAPL', 'crypto')).toMatchObject({ assetClass: 'crypto', base: 'AAPL' });
  });

  it('rejects what cannot be a symbol of the class', () => {
    expect(() => parseSymbol('TOOLONGTICKER', 'equity')).toThrow(/query parameter 'symbol' must be a US equity/);
  });

  it('takes what counts as crypto from the predicate it is given (the venues\' listings in the routes)', () => {
    const listed = (base: string) => ['PUMP', 'BTC'].includes(base);
    expect(parseSymbol('PUMP')).toMatchObject({ assetClass: 'equity', ticker: 'PUMP' });
    expect(parseSymbol('PUMP', undefined, listed)).toEqual({ assetClass: 'crypto', base: 'PUMP', quote: 'USDT', explicitQuote: false });
    // A 3-letter quote splits only off a base that counts as crypto.
    expect(parseSymbol('PUMPUSD', 'crypto')).toMatchObject({ base: 'PUMPUSD', explicitQuote: false });
    expect(parseSymbol('PUMPUSD', 'crypto', listed)).toMatchObject({ base: 'PUMP', quote: 'USD', explicitQuote: true });
    expect(parseSymbol('STETH', 'crypto', listed)).toMatchObject({ base: 'STETH', explicitQuote: false });
  });

  it('crypto only: any well-formed base asset or pair; only what cannot be crypto is a 400', () => {
    expect(parseCryptoSymbol('nope')).toEqual({ assetClass: 'crypto', base: 'NOPE', quote: 'USDT', explicitQuote: false });
    expect(parseCryptoSymbol('AAPL')).toMatchObject({ base: 'AAPL' });
    expect(parseCryptoSymbol('1000SATS')).toMatchObject({ base: '1000SATS' });
    expect(() => parseCryptoSymbol('BRK.B')).toThrow("query parameter 'symbol' takes crypto only: a crypto base asset (BTC, PEPE) or a pair (BTCUSDT, BTC-USDT, BTC/USDT); got 'BRK.B'");
  });

  it('maps the default USDT quote to Coinbase USD markets, but keeps an explicit quote', () => {
    expect(coinbaseProduct(parseSymbol('BTC') as never)).toBe('BTC-USD');
    expect(coinbaseProduct(parseSymbol('BTC-USDT') as never)).toBe('BTC-USDT');
  });
});
