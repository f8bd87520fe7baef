// "$0.001" → atomic units of the payment token, without floating point.

export function atomicAmount(price: string, decimals: number): string {
  const m = /^\$(\d+)(?:\.(\d+))?$/.exec(price);
  if (!m) throw new Error(`not a dollar price: ${price}`);
  const [, whole, frac = ''] = m;
  if (frac.replace(/0+$/, '').length > decimals) throw new Error(`${price} has more precision than the token's ${decimals} decimals`);
  const atomic = BigInt(whole!) * 10n ** BigInt(decimals) + BigInt((frac + '0'.repeat(decimals)).slice(0, decimals) || '0');
  return atomic.toString();
}
