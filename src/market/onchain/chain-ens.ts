// /v1/chain-ens: an ENS name's address, or an address's primary name, on Ethereum mainnet.
import { z } from 'zod';
import { defineRoute } from '../../catalog/route.ts';
import { envelope } from '../../upstream/envelope.ts';
import { BadRequestError } from '../../lib/errors.ts';
import { primaryName, resolveName } from './ens.ts';
import { ensNameParam, hexAddressParam, loadEnsNormalizer, parseEnsName, parseHexAddress } from './params.ts';

const query = z.object({
  name: ensNameParam.optional(),
  address: hexAddressParam('Address whose primary name to look up').optional(),
});

const data = z.object({
  lookup: z.enum(['name_to_address', 'address_to_name']).describe('Which way was asked: name → address (forward) or address → primary name (reverse)'),
  name: z.string().describe('The ENS name: the one given (ENSIP-15 normalized), or the primary name found'),
  address: z.string().describe('The address, EIP-55 checksummed: the name\'s ETH address record (coin type 60), or the one given'),
});

export const chainEns = defineRoute({
  path: '/v1/chain-ens',
  summary: 'ENS on Ethereum: a name\'s address, or an address\'s primary name',
  description:
    'Exactly one of name or address. name → its ETH address record (coin type 60), through the ENS Universal Resolver (ENS_UNIVERSAL_RESOLVER, ' +
    "else viem's default). address → its primary name: the reverse record, returned only when that name resolves back to the address (the " +
    'Universal Resolver verifies it). No record → 404. Names resolved off-chain (CCIP-Read, EIP-3668) are not followed: 502 saying so. Live, not cached.',
  tag: 'On-chain',
  access: 'paid',
  query,
  prepare: loadEnsNormalizer,
  data,
  example: { name: 'vitalik.eth' },
  handler: async (req, { sources }) => {
    const { name, address } = req.query;
    if ((name === undefined) === (address === undefined)) throw new BadRequestError("give exactly one of the query parameters 'name' (an ENS name) or 'address' (a 0x address)");
    if (name !== undefined) {
      const normalized = parseEnsName('name', name);
      const got = await resolveName(sources, normalized);
      return envelope({ lookup: 'name_to_address' as const, name: normalized, address: got.address }, [got.meta]);
    }
    const checksummed = parseHexAddress('address', address!);
    const got = await primaryName(sources, checksummed);
    return envelope({ lookup: 'address_to_name' as const, name: got.name, address: checksummed }, [got.meta]);
  },
});
