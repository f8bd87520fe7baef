// The x402 networks known by short name: CAIP-2 id and that network's USDC (6 decimals, EIP-712 version 2).
export const X402_NETWORKS: Record<string, { caip2: `eip155:${number}`; usdc: `0x${string}`; usdcName: string }> = {
  base: { caip2: 'eip155:8453', usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', usdcName: 'USD Coin' },
  'base-sepolia': { caip2: 'eip155:84532', usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', usdcName: 'USDC' },
};

// The Solana networks x402's `exact` SVM scheme (@x402/svm) serves, by short name: CAIP-2 id (solana:<genesis hash,
// first 32 characters>) and that network's USDC mint (6 decimals). @x402/svm knows no others.
export const SVM_NETWORKS: Record<string, { caip2: `solana:${string}`; usdc: string }> = {
  mainnet: { caip2: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' },
  devnet: { caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', usdc: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' },
};

/** The short name or CAIP-2 id of a Solana network @x402/svm serves → its entry; undefined otherwise. */
export function svmNetwork(value: string): { caip2: `solana:${string}`; usdc: string } | undefined {
  return SVM_NETWORKS[value] ?? Object.values(SVM_NETWORKS).find((n) => n.caip2 === value);
}

/**
 * The decimals of a token the ledger names: a configured one's (X402_ASSET, X402_SVM_ASSET), or a known network's
 * USDC (6: Base's, or a Solana network's mint); else unknown. An EVM address matches in any case; a Solana mint's
 * base58 address is case-sensitive.
 */
export function tokenDecimals(asset: string, configured: readonly ({ address: string; decimals: number } | undefined)[] = []): number | undefined {
  const same = (a: string) => (a.startsWith('0x') ? a.toLowerCase() === asset.toLowerCase() : a === asset);
  const mine = configured.find((c) => c !== undefined && same(c.address));
  if (mine) return mine.decimals;
  return [...Object.values(X402_NETWORKS), ...Object.values(SVM_NETWORKS)].some((n) => same(n.usdc)) ? 6 : undefined;
}
