// /v1/chain-nonce: how many transactions an address has sent, mined and counting the node's pending pool.
import { z } from 'zod';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas } from '../../upstream/envelope.ts';
import { resolveAccount } from './ens.ts';
import { accountFields } from './fields.ts';
import { addressOrNameParam, chainParam, loadEnsNormalizer, parseAddressOrName, parseChain, rpcOf } from './params.ts';

const query = z.object({ address: addressOrNameParam, chain: chainParam });

const data = z.object({
  ...accountFields,
  confirmed: z.number().int().describe('eth_getTransactionCount at "latest": transactions from the address in mined blocks, i.e. the next nonce once nothing is pending'),
  pending: z
    .number()
    .int()
    .describe('eth_getTransactionCount at "pending": also counts the transactions in this node\'s pending pool (a node may not see transactions sent elsewhere yet)'),
});

export const chainNonce = defineRoute({
  path: '/v1/chain-nonce',
  summary: 'Confirmed and pending transaction count (nonce) of an address on an EVM chain',
  description:
    'eth_getTransactionCount at the "latest" and "pending" block tags, asked together (live, not cached). pending − confirmed = transactions of the ' +
    'address waiting in the node\'s pool. An ENS name is resolved on Ethereum mainnet first.',
  tag: 'On-chain',
  access: 'paid',
  query,
  prepare: loadEnsNormalizer,
  data,
  example: { address: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045', chain: 'base' },
  handler: async (req, { sources }) => {
    const chain = parseChain(req.query.chain);
    const account = await resolveAccount(sources, parseAddressOrName('address', req.query.address));
    const got = await rpcOf(sources, chain).live((c) =>
      Promise.all([c.getTransactionCount({ address: account.address, blockTag: 'latest' }), c.getTransactionCount({ address: account.address, blockTag: 'pending' })]),
    );
    const [confirmed, pending] = got.data;
    return envelope({ chain: chain.name, address: account.address, ens_name: account.ens_name, confirmed, pending }, mergeSourceMetas([...account.metas, got.meta]));
  },
});
