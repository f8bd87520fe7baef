// Fields shared by the on-chain answers, described once.
import { z } from 'zod';

export const chainField = z.string().describe('Chain name: ethereum, base, arbitrum, optimism or polygon');

/** chain, address and ens_name: who was asked about. */
export const accountFields = {
  chain: chainField,
  address: z.string().describe('The address asked about, EIP-55 checksummed (the resolved address when a name was given)'),
  ens_name: z.string().nullable().describe('The ENS name given as `address` (ENSIP-15 normalized), resolved on Ethereum mainnet; null when a 0x address was given'),
};
