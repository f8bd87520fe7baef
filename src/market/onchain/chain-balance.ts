// /v1/chain-balance: the native balance (ETH, or POL on Polygon) of an address or ENS name, live.
import { z } from 'zod';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas } from '../../upstream/envelope.ts';
import { loadViem } from '../../sources/viem.ts';
import { resolveAccount } from './ens.ts';
import { accountFields } from './fields.ts';
import { addressOrNameParam, chainParam, loadEnsNormalizer, parseAddressOrName, parseChain, rpcOf } from './params.ts';

const query = z.object({ address: addressOrNameParam, chain: chainParam });

const data = z.object({
  ...accountFields,
  balance_wei: z.string().describe('Native balance in wei (10^-18 of the native coin), a decimal integer string'),
  balance: z.string().describe('balance_wei / 10^18, an exact decimal string (no rounding)'),
  symbol: z.string().describe('Native coin: ETH (ethereum, base, arbitrum, optimism) or POL (polygon)'),
  block_number: z.number().int().describe('The block the balance was read at: the head when asked'),
});

export const chainBalance = defineRoute({
  path: '/v1/chain-balance',
  summary: 'Native balance of an address or ENS name on an EVM chain',
  description:
    'Reads the head block number, then eth_getBalance at that block, from the chain\'s RPC (live, not cached), so balance and block_number belong together. ' +
    'An ENS name is resolved on Ethereum mainnet first (404 when it has no ETH address record).',
  tag: 'On-chain',
  access: 'paid',
  query,
  prepare: loadEnsNormalizer,
  data,
  example: { address: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045', chain: 'ethereum' },
  handler: async (req, { sources }) => {
    const chain = parseChain(req.query.chain);
    const account = await resolveAccount(sources, parseAddressOrName('address', req.query.address));
    const got = await rpcOf(sources, chain).live(async (c) => {
      const blockNumber = await c.getBlockNumber({ cacheTime: 0 });
      return { blockNumber, wei: await c.getBalance({ address: account.address, blockNumber }) };
    });
    const { formatUnits } = await loadViem();
    return envelope(
      {
        chain: chain.name,
        address: account.address,
        ens_name: account.ens_name,
        balance_wei: got.data.wei.toString(),
        balance: formatUnits(got.data.wei, chain.viem.nativeCurrency.decimals),
        symbol: chain.symbol,
        block_number: Number(got.data.blockNumber),
      },
      mergeSourceMetas([...account.metas, got.meta]),
    );
  },
});
