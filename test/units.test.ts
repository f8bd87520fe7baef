import { clientBucket, clientBucketName } from '../src/access/rate-limit/client-bucket.ts';
import { describe, expect, it } from 'vitest';
import { atomicAmount } from '../src/payments/price.ts';
import { ResponseCache } from '../src/upstream/cache.ts';
import { coinbaseProduct, parseCryptoSymbol, parseSymbol } from '../src/params/symbols.ts';

describe('atomicAmount', () => {
  it.each([
    ['$0.001', 6, '1000'],
    ['$1', 6, '1000000'],
    ['$0.000001', 6, '1'],
    ['$2.5', 18, '2500000000000000000'],
    ['$0.10', 2, '10'],
  ])('%s at %i decimals = %s', (price, decimals, atomic) => expect(atomicAmount(price, decimals)).toBe(atomic));

  it('refuses more precision than the token has', () => {
    expect(() => atomicAmount('$0.0000001', 6)).toThrow(/more precision/);
  });
});

describe('ResponseCache', () => {
  it('evicts the least recently used entry beyond its bound', async () => {
    const cache = new ResponseCache({ maxEntries: 2, maxBytes: 1 << 20 });
    await cache.getOrLoad('a', 60_000, async () => 1);
    await cache.getOrLoad('b', 60_000, async () => 2);
    await cache.getOrLoad('a', 60_000, async () => -1); // touch a
    await cache.getOrLoad('c', 60_000, async () => 3); // evicts b
    expect(cache.size).toBe(2);
    expect((await cache.getOrLoad('a', 60_000, async () => -1)).value).toBe(1);
    expect((await cache.getOrLoad('b', 60_000, async () => 22)).value).toBe(22);
  });

  it('expires entries after their TTL and never stores failures', async () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 });
    await cache.getOrLoad('k', 20, async () => 'old');
    await new Promise((r) => setTimeout(r, 40));
    expect((await cache.getOrLoad('k', 20, async () => 'new')).value).toBe('new');
    await expect(cache.getOrLoad('f', 60_000, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect((await cache.getOrLoad('f', 60_000, async () => 'ok')).value).toBe('ok');
  });

  it("serves a stored entry only while it is younger than the caller's own TTL (a price needs a fresher copy)", async () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 });
    await cache.getOrLoad('k', 60_000, async () => 'kept for a minute');
    await new Promise((r) => setTimeout(r, 80));
    // A caller accepting 60 s gets the stored value; one accepting 30 ms gets a fresh load, which then serves both.
    expect(await cache.getOrLoad('k', 60_000, async () => 'x')).toMatchObject({ value: 'kept for a minute', cached: true });
    expect(await cache.getOrLoad('k', 30, async () => 'fresh')).toMatchObject({ value: 'fresh', cached: false });
    // The short-TTL reload keeps the entry's one-minute life for the other callers.
    await new Promise((r) => setTimeout(r, 80));
    expect(await cache.getOrLoad('k', 60_000, async () => 'x')).toMatchObject({ value: 'fresh', cached: true });
    // TTL 0 never takes a stored value.
    expect(await cache.getOrLoad('k', 0, async () => 'uncached')).toMatchObject({ value: 'uncached', cached: false });
  });

  it('coalesces concurrent loads of one key; joiners are not marked cached', async () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 });
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      return 'v';
    };
    const all = await Promise.all([1, 2, 3].map(() => cache.getOrLoad('x', 1000, load)));
    expect(loads).toBe(1);
    expect(all.map((a) => a.cached)).toEqual([false, false, false]);
    expect((await cache.getOrLoad('x', 1000, load)).cached).toBe(true);
  });

  it('keeps when the load was started (sentAt) beside when it answered, for joiners and cache hits alike', async () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 });
    const before = Date.now();
    const load = async () => {
      await new Promise((r) => setTimeout(r, 50));
      return 'v';
    };
    const [first, joiner] = await Promise.all([cache.getOrLoad('x', 60_000, load), cache.getOrLoad('x', 60_000, load)]);
    expect(first.sentAt).toBeGreaterThanOrEqual(before);
    expect(first.fetchedAt.ms - first.sentAt).toBeGreaterThanOrEqual(45);
    expect(joiner.sentAt).toBe(first.sentAt);
    const hit = await cache.getOrLoad('x', 60_000, load);
    expect([hit.cached, hit.sentAt, hit.fetchedAt]).toEqual([true, first.sentAt, first.fetchedAt]);
  });
});

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

describe('clientBucket (whose quota a request counts against)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:85a3:1:8a2e:370:7334:1', '2001:db8:85a3:1::/64'],
    ['2001:db8:85a3:1:ffff::2', '2001:db8:85a3:1::/64'],
    ['2001:0DB8:0000:0001::', '2001:db8:0:1::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not:an:address:::', 'not:an:address:::'],
  ])('%s → %s', (ip, bucket) => expect(clientBucket(ip)).toBe(bucket));

  it('names a bucket once per connection and scope, and again when the client address changes (TRUST_PROXY)', () => {
    const socket = {};
    const free = clientBucketName('free', '::ffff:203.0.113.7', socket);
    expect(free).toBe('free:203.0.113.7');
    expect(clientBucketName('free', '::ffff:203.0.113.7', socket)).toBe(free);
    expect(clientBucketName('paid', '::ffff:203.0.113.7', socket)).toBe('paid:203.0.113.7');
    // Behind a proxy one connection carries several clients: each is named for its own address.
    expect(clientBucketName('free', '198.51.100.9', socket)).toBe('free:198.51.100.9');
    expect(clientBucketName('free', '2001:db8:85a3:1::2', {})).toBe('free:2001:db8:85a3:1::/64');
  });
});
