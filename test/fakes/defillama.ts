// The recorded DefiLlama pool (Lido stETH, defillama__yields_pools.json) as the app answers it.
export const LIDO = {
  pool: '747c1d2a-c668-4682-b9f9-296708a3dd90',
  project: 'lido',
  chain: 'Ethereum',
  symbol: 'STETH',
  tvl_usd: 23908962564,
  apy: 2.235,
  apy_base: 2.235,
  apy_reward: null,
  stablecoin: false,
  il_risk: false,
};
