// The x402 networks known by short name: CAIP-2 id and that network's USDC (6 decimals, EIP-712 version 2).
export const X402_NETWORKS: Record<string, { caip2: `eip155:${number}`; usdc: `0x${string}`; usdcName: string }> = {
  base: { caip2: 'eip155:8453', usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', usdcName: 'USD Coin' },
  'base-sepolia': { caip2: 'eip155:84532', usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', usdcName: 'USDC' },
};

/** The decimals of a token the ledger names: the configured one's, or a known network's USDC (6); else unknown. */
export function tokenDecimals(asset: string, configured?: { address: string; decimals: number }): number | undefined {
  if (configured && configured.address.toLowerCase() === asset.toLowerCase()) return configured.decimals;
  return Object.values(X402_NETWORKS).some((n) => n.usdc.toLowerCase() === asset.toLowerCase()) ? 6 : undefined;
}
