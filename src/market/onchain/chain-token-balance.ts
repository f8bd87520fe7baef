// /v1/chain-token-balance: an address's balance of an ERC-20 token, with the token's symbol and
// decimals read from the contract, live.
import type { Address, ContractFunctionExecutionError, PublicClient } from 'viem';
import { z } from 'zod';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas } from '../../upstream/envelope.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { upstreamCause } from '../../sources/define-source.ts';
import type { EvmChain, EvmRpc } from '../../sources/evm-rpc.ts';
import { loadViem } from '../../sources/viem.ts';
import { resolveAccount } from './ens.ts';
import { accountFields } from './fields.ts';
import { addressOrNameParam, chainParam, hexAddressParam, loadEnsNormalizer, parseAddressOrName, parseChain, parseHexAddress, rpcOf } from './params.ts';

const query = z.object({ address: addressOrNameParam, token: hexAddressParam('ERC-20 token contract'), chain: chainParam });

const data = z.object({
  ...accountFields,
  token: z.string().describe('The token contract, EIP-55 checksummed'),
  symbol: z
    .string()
    .nullable()
    .describe("The token's symbol() (a bytes32 symbol, as some early tokens return, is read as text), NUL padding stripped; null when nothing is left"),
  decimals: z.number().int().describe("The token's decimals(), 0-255 (uint8): balance = balance_raw / 10^decimals"),
  balance_raw: z.string().describe('balanceOf(address) in the smallest unit, a decimal integer string'),
  balance: z.string().describe('balance_raw / 10^decimals, an exact decimal string (no rounding)'),
});

/** viem (loaded on first use: see sources/viem.ts). */
type Viem = typeof import('viem');

const isRevertOrEmpty = (viem: Viem, err: ContractFunctionExecutionError) =>
  err.walk((e) => e instanceof viem.ContractFunctionRevertedError || e instanceof viem.ContractFunctionZeroDataError) !== null;

/** ERC-20's decimals() is a uint8; viem decodes the whole word, so a larger value gets this far. */
const MAX_DECIMALS = 255;

/** A symbol with its NUL padding (bytes32 symbols, strings padded by their deployer) stripped; null when nothing is left. */
const symbolText = (raw: string): string | null => raw.replace(/^\0+|\0+$/g, '') || null;

/** symbol() as a string, or as bytes32 for the early tokens that return one (MKR, SAI). */
async function readSymbol(viem: Viem, c: PublicClient, token: Address): Promise<string | null> {
  try {
    return symbolText(await c.readContract({ address: token, abi: viem.erc20Abi, functionName: 'symbol' }));
  } catch (err) {
    // Only an answer that does not decode as a string is retried; a revert or a failure stays one.
    if (!(err instanceof viem.ContractFunctionExecutionError) || upstreamCause(err) || isRevertOrEmpty(viem, err)) throw err;
    const raw = await c.readContract({ address: token, abi: viem.erc20Abi_bytes32, functionName: 'symbol' });
    return symbolText(viem.hexToString(raw, { size: 32 }));
  }
}

/** balanceOf, decimals and symbol; a contract that does not answer all three as ERC-20 does is a 404. */
async function readToken(viem: Viem, rpc: EvmRpc, chain: EvmChain, token: Address, owner: Address) {
  const { erc20Abi, ContractFunctionExecutionError, ContractFunctionRevertedError, ContractFunctionZeroDataError } = viem;
  try {
    return await rpc.live((c) =>
      Promise.all([
        c.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] }),
        c.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' }),
        readSymbol(viem, c, token),
      ]),
    );
  } catch (err) {
    if (!(err instanceof ContractFunctionExecutionError)) throw err;
    const code = await rpc.live((c) => c.getCode({ address: token }));
    if (!code.data || code.data === '0x') throw new NotFoundError(`token ${token} is not a contract on ${chain.name} (no code at that address)`, rpc.name);
    const how = err.walk((e) => e instanceof ContractFunctionRevertedError) ? 'reverted' : err.walk((e) => e instanceof ContractFunctionZeroDataError) ? 'returned no data' : 'returned data that is not its ERC-20 type';
    throw new NotFoundError(`token ${token} on ${chain.name} is not an ERC-20 contract: ${err.functionName}() ${how}`, rpc.name);
  }
}

export const chainTokenBalance = defineRoute({
  path: '/v1/chain-token-balance',
  summary: 'ERC-20 token balance of an address or ENS name on an EVM chain',
  description:
    'Calls balanceOf(address), decimals() and symbol() on the token contract at the head (live, not cached). A token address with no contract, ' +
    'or a contract that does not answer those three as an ERC-20 does (decimals() above 255, outside uint8, included), is a 404. ' +
    'symbol is null when the contract answers only NUL padding. An ENS name is resolved on Ethereum mainnet first.',
  tag: 'On-chain',
  access: 'paid',
  query,
  prepare: loadEnsNormalizer,
  data,
  example: { address: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045', token: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', chain: 'ethereum' },
  handler: async (req, { sources }) => {
    const chain = parseChain(req.query.chain);
    const token = parseHexAddress('token', req.query.token);
    const account = await resolveAccount(sources, parseAddressOrName('address', req.query.address));
    const rpc = rpcOf(sources, chain);
    const viem = await loadViem();
    const got = await readToken(viem, rpc, chain, token, account.address);
    const [raw, decimals, symbol] = got.data;
    // Refused before anything is formatted: formatUnits is quadratic in decimals (0.7 s at 40000).
    if (decimals > MAX_DECIMALS) {
      throw new NotFoundError(`token ${token} on ${chain.name} is not an ERC-20 token: decimals() returned ${decimals}, outside uint8 (0-${MAX_DECIMALS})`, rpc.name);
    }
    return envelope(
      {
        chain: chain.name,
        address: account.address,
        ens_name: account.ens_name,
        token,
        symbol,
        decimals,
        balance_raw: raw.toString(),
        balance: viem.formatUnits(raw, decimals),
      },
      mergeSourceMetas([...account.metas, got.meta]),
    );
  },
});
