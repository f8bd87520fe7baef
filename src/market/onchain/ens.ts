// ENS on Ethereum mainnet through the Universal Resolver (viem's getEnsAddress / getEnsName, with
// ENS_UNIVERSAL_RESOLVER when set). "No record" is viem's null (a name without a resolver or an
// address, an address without a primary name, or a primary name that does not resolve back to the
// address: the Universal Resolver checks the forward record and reverts ReverseAddressMismatch) → 404.
// A resolver that answers off-chain (CCIP-Read, EIP-3668) is not followed: gateways chosen by
// contracts would be called outside the source's guard. That is a 502 that says so, not a 404,
// because the record may well exist.
import type { Address, BaseError, ContractFunctionExecutionError, ContractFunctionRevertedError, PublicClient } from 'viem';
import type { SourceMeta } from '../../upstream/envelope.ts';
import { NotFoundError, UpstreamError } from '../../lib/errors.ts';
import { checksumEvmAddress } from '../../params/evm-address.ts';
import type { EvmRpc } from '../../sources/evm-rpc.ts';
import type { Sources } from '../../sources/index.ts';
import { loadViem, loadViemEns } from '../../sources/viem.ts';
import type { AddressInput } from './params.ts';

/** The selector of `OffchainLookup(address,string[],bytes,bytes4,bytes)` (EIP-3668). */
const OFFCHAIN_LOOKUP = '0x556f1830';

/** An account parameter made concrete: the address, and the name it came from (if any). */
export interface Account {
  address: Address;
  ens_name: string | null;
  metas: SourceMeta[];
}

/** The ETH address (coin type 60) of an ENS name; 404 when it has none. */
export async function resolveName(sources: Sources, name: string): Promise<{ address: Address; meta: SourceMeta }> {
  const rpc = sources.rpcEthereum;
  const { getEnsAddress } = await loadViemEns();
  const got = await ensCall(rpc, `the ENS name ${name}`, (c) => getEnsAddress(c, { name, universalResolverAddress: rpc.ensUniversalResolver }));
  if (!got.data) throw new NotFoundError(`the ENS name ${name} has no ETH address record`, rpc.name);
  return { address: got.data, meta: got.meta };
}

/** The primary ENS name of an address (reverse record, verified forward); 404 when it has none. */
export async function primaryName(sources: Sources, address: Address): Promise<{ name: string; meta: SourceMeta }> {
  const rpc = sources.rpcEthereum;
  const { getEnsName } = await loadViemEns();
  const got = await ensCall(rpc, `the primary name of ${address}`, (c) => getEnsName(c, { address, universalResolverAddress: rpc.ensUniversalResolver }));
  if (!got.data) {
    throw new NotFoundError(`${address} has no primary ENS name (no reverse record, or its name does not resolve back to this address)`, rpc.name);
  }
  return { name: got.data, meta: got.meta };
}

/** An `address` parameter as an address: a name is resolved on Ethereum first. */
export async function resolveAccount(sources: Sources, input: AddressInput): Promise<Account> {
  if (input.kind === 'address') return { address: input.address, ens_name: null, metas: [] };
  const { address, meta } = await resolveName(sources, input.name);
  return { address, ens_name: input.name, metas: [meta] };
}

async function ensCall<T>(rpc: EvmRpc, what: string, call: (client: PublicClient) => Promise<T>) {
  const viem = await loadViem();
  try {
    return await rpc.live<T>(call);
  } catch (err) {
    if (err instanceof viem.ContractFunctionExecutionError) throw ensFailure(viem, rpc, what, err);
    throw err;
  }
}

/** A Universal Resolver call viem did not map to null: why, in words. */
function ensFailure(viem: typeof import('viem'), rpc: EvmRpc, what: string, err: ContractFunctionExecutionError): UpstreamError {
  const { ContractFunctionRevertedError, ContractFunctionZeroDataError } = viem;
  const reverted = (err as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
  const data = reverted?.raw ?? reverted?.signature;
  if (data?.startsWith(OFFCHAIN_LOOKUP)) {
    return new UpstreamError(rpc.name, 'provider', `${what} is resolved off-chain (CCIP-Read, EIP-3668), which this server does not follow`);
  }
  const resolver = err.contractAddress ? checksumEvmAddress(err.contractAddress) : 'its address';
  if (err.walk((e) => e instanceof ContractFunctionZeroDataError)) {
    return new UpstreamError(rpc.name, 'provider', `the ENS Universal Resolver at ${resolver} returned no data (is there a contract?)`);
  }
  const reason = reverted?.data?.errorName ?? reverted?.reason ?? err.shortMessage;
  return new UpstreamError(rpc.name, 'provider', `the ENS Universal Resolver failed on ${what}: ${reason}`);
}
