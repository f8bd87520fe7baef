// A route's `symbol` read with the venues' listings: the pure rules of src/params/symbols.ts, asked
// first with the shipped list alone; only when that list cannot settle the reading (a base asset not on
// it, with no asset_class; or XYZUSD with XYZ not on it) are the listings consulted (see
// crypto-listings.ts for how long that may wait: at most once, briefly, after start-up).
import { isShippedCrypto, parseCryptoSymbol, parseSymbol, type AssetClass, type CryptoSymbol, type IsCryptoAsset, type MarketSymbol } from '../params/symbols.ts';
import type { CryptoListings } from '../sources/crypto-listings.ts';

/** A symbol of either class (price, candles and the analytics over them). */
export function resolveSymbol(listings: CryptoListings, input: string, assetClass?: AssetClass): Promise<MarketSymbol> {
  return withListings(listings, (isCrypto) => parseSymbol(input, assetClass, isCrypto));
}

/** A symbol of a crypto-only route: any well-formed base asset or pair. */
export function resolveCryptoSymbol(listings: CryptoListings, input: string): Promise<CryptoSymbol> {
  return withListings(listings, (isCrypto) => parseCryptoSymbol(input, isCrypto));
}

async function withListings<T>(listings: CryptoListings, parse: (isCrypto: IsCryptoAsset) => T): Promise<T> {
  let unsettled = false;
  const shippedOnly: IsCryptoAsset = (base) => {
    if (isShippedCrypto(base)) return true;
    unsettled = true;
    return false;
  };
  try {
    const read = parse(shippedOnly);
    if (!unsettled) return read;
  } catch (err) {
    if (!unsettled) throw err;
  }
  return parse(await listings.predicate());
}
