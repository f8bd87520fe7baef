// Known LP locker contracts per chain: LP tokens they hold count as locked (`liquidity.lp_locked_pct`). Each
// default is cited; LP_LOCKERS_<CHAIN> (evm-rpc.ts) replaces a chain's list. Defaults:
//   UNCX (Unicrypt) UniswapV2Locker "lockerV2" for Uniswap V2 on each chain, from UNCX's own repository
//   (github.com/uncx-network/liquidity-locker-univ2-contracts, README "Latest deployments (April 2024)").
// Team Finance and PinkLock publish no per-chain address list we could cite here, so they are not defaults:
// add their lockers to LP_LOCKERS_<CHAIN> to count them.
import type { EvmNetworkName } from './evm-networks.ts';

const UNCX = 'UNCX lockerV2 (github.com/uncx-network/liquidity-locker-univ2-contracts, README)';

export const LP_LOCKERS: Record<EvmNetworkName, { addresses: readonly string[]; source: string }> = {
  ethereum: { addresses: ['0x59d7D55DdC58494FbBbca29904f108ece82Ac7FB'], source: UNCX },
  arbitrum: { addresses: ['0x63F4B2C082B1E0bbA38874567E053800379bF8D7'], source: UNCX },
  optimism: { addresses: ['0x5923c3911d9424F7725CAd33Ed176A6b885484D6'], source: UNCX },
  polygon: { addresses: ['0x939d71ADe0Bf94d3F8cf578413bF2a2f248BF58b'], source: UNCX },
  base: { addresses: [], source: 'none cited' },
  bsc: { addresses: [], source: 'none cited' },
  avalanche: { addresses: [], source: 'none cited' },
  fantom: { addresses: [], source: 'none cited' },
  zksync: { addresses: [], source: 'none cited' },
  linea: { addresses: [], source: 'none cited' },
  scroll: { addresses: [], source: 'none cited' },
};

/** LP is burned when held by these: the zero address and the common dead address. */
export const BURN_ADDRESSES = ['0x0000000000000000000000000000000000000000', '0x000000000000000000000000000000000000dead'] as const;
