// The local chain of the on-chain endpoint tests: an in-process Hardhat EDR node (test/payments/x402/chain.ts)
// with an ERC-20 (TestUSDC, 6 decimals), a bytes32-symbol token, odd tokens (decimals beyond uint8, a NUL
// symbol), and ENS (a registry, a resolver and a
// universal resolver implementing what viem calls), set up by the transactions below. Every value the
// tests assert is one this file put on the chain: amounts sent, names registered, nonces used.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWalletClient, http, keccak256, labelhash, namehash, parseEther, toHex, type Address, type Hash, type WalletClient } from 'viem';
import { mnemonicToAccount, privateKeyToAccount, type Account } from 'viem/accounts';
import { deployFixtures, MNEMONIC, startLocalChain, type LocalChain } from '../../payments/x402/chain.ts';
import { compileContracts } from '../../payments/x402/compile.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const ONCHAIN_CONTRACTS = ['TestEnsRegistry', 'TestEnsResolver', 'TestUniversalResolver', 'Bytes32SymbolToken', 'OddToken'] as const;

/** Settings of the local node the tests assert: fee recipient, block gas limit, genesis base fee. */
export const NODE = {
  coinbase: '0x1111111111111111111111111111111111111111',
  blockGasLimit: 30_000_000n,
  initialBaseFeePerGas: 1_000_000_000n, // 1 gwei at genesis
} as const;

/** Fresh accounts (not funded at genesis), so their balances are exactly what the tests sent. */
const fresh = (label: string) => privateKeyToAccount(keccak256(toHex(label)));
export const ALICE = fresh('marketgate alice');
export const MALLORY = fresh('marketgate mallory');
export const NOBODY = fresh('marketgate nobody');
/** Sends the transfers whose nonces are asserted; funded at genesis, used by nothing else. */
export const SENDER = mnemonicToAccount(MNEMONIC, { addressIndex: 7 });
/** Funded at genesis, for the tests' own later transfers (so SENDER's nonce stays the world's). */
export const FUNDER = mnemonicToAccount(MNEMONIC, { addressIndex: 8 });
const DEPLOYER = mnemonicToAccount(MNEMONIC, { addressIndex: 0 });

/** Gas price of the test's own transfers (legacy transactions), so the effective price is known: 3 gwei. */
export const GAS_PRICE = 3_000_000_000n;

export interface OnchainWorld {
  chain: LocalChain;
  usdc: Address;
  mkr: Address;
  /** OddTokens: decimals() 40000 (outside uint8) and 255 (the largest uint8), 1 unit of each to ALICE; symbol() four NUL characters. */
  odd: { hugeDecimals: Address; maxDecimals: Address; nulSymbol: Address };
  registry: Address;
  universalResolver: Address;
  /** SENDER's 1.5 ETH to ALICE (nonce 0), in a block stamped TRANSFER_TIMESTAMP. */
  transfer: { hash: Hash; block: bigint; timestamp: number };
  /** A reverted call (TestUSDC.transfer beyond the sender's balance, manual gas limit). */
  reverted: { hash: Hash; block: bigint };
  /** ERC-20 transfer, with one Transfer log. */
  tokenTransfer: { hash: Hash; block: bigint };
  wallet(account: Account): WalletClient;
  rpc<T>(method: string, params?: unknown[]): Promise<T>;
  close(): Promise<void>;
}

/** The timestamp the test gives the block of the ETH transfer: 2030-03-17T17:46:40Z. */
export const TRANSFER_TIMESTAMP = 1_900_000_000;

export async function startOnchainWorld(): Promise<OnchainWorld> {
  const chain = await startLocalChain(31337, { ...NODE, throwOnTransactionFailures: false });
  const arts = compileContracts(here, ONCHAIN_CONTRACTS);
  const fx = await deployFixtures(chain);
  const pc = chain.publicClient;
  const wallet = (account: Account) => createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl), pollingInterval: 50 });
  const rpc = <T>(method: string, params: unknown[] = []) => pc.request({ method: method as never, params: params as never }) as Promise<T>;
  const deployer = wallet(DEPLOYER);
  const mined = (hash: Hash) => pc.waitForTransactionReceipt({ hash });
  const deploy = async (name: (typeof ONCHAIN_CONTRACTS)[number], args: unknown[] = []) => {
    const a = arts[name];
    const hash = await deployer.deployContract({ abi: a.abi, bytecode: a.bytecode, args, account: DEPLOYER, chain: chain.chain });
    return (await mined(hash)).contractAddress!;
  };
  const write = async (address: Address, name: (typeof ONCHAIN_CONTRACTS)[number], functionName: string, args: unknown[]) =>
    mined(await deployer.writeContract({ address, abi: arts[name].abi, functionName, args, account: DEPLOYER, chain: chain.chain }));

  // ENS: eth, alice.eth → ALICE, 0x.eth → NOBODY, noaddr.eth (a resolver, no address), offchain.eth (CCIP-Read), reverse records.
  const registry = await deploy('TestEnsRegistry');
  const resolver = await deploy('TestEnsResolver', [registry]);
  const universalResolver = await deploy('TestUniversalResolver', [registry]);
  const sub = (parent: string, label: string) => write(registry, 'TestEnsRegistry', 'setSubnodeOwner', [namehash(parent), labelhash(label), DEPLOYER.address]);
  await sub('', 'eth');
  for (const label of ['alice', 'noaddr', 'offchain', 'mallory', '0x']) {
    await sub('eth', label);
    await write(registry, 'TestEnsRegistry', 'setResolver', [namehash(`${label}.eth`), resolver]);
  }
  await write(resolver, 'TestEnsResolver', 'setAddr', [namehash('alice.eth'), ALICE.address]);
  // 0x.eth → NOBODY: a valid ENSIP-15 name that starts like an address.
  await write(resolver, 'TestEnsResolver', 'setAddr', [namehash('0x.eth'), NOBODY.address]);
  await write(universalResolver, 'TestUniversalResolver', 'setOffchain', [namehash('offchain.eth'), true]);
  await sub('', 'reverse');
  await sub('reverse', 'addr');
  // ALICE's primary name is alice.eth (which resolves back to ALICE); MALLORY claims alice.eth too (which does not).
  for (const [who, name] of [[ALICE.address, 'alice.eth'], [MALLORY.address, 'alice.eth']] as const) {
    const label = who.slice(2).toLowerCase();
    await sub('addr.reverse', label);
    await write(registry, 'TestEnsRegistry', 'setResolver', [namehash(`${label}.addr.reverse`), resolver]);
    await write(resolver, 'TestEnsResolver', 'setName', [namehash(`${label}.addr.reverse`), name]);
  }

  // Tokens: 1.5 USDC (1_500_000 units, 6 decimals) and 2.5 MKR (bytes32 symbol, 18 decimals) to ALICE.
  await fx.mint(ALICE.address, 1_500_000n);
  const mkr = await deploy('Bytes32SymbolToken');
  await write(mkr, 'Bytes32SymbolToken', 'mint', [ALICE.address, parseEther('2.5')]);
  const odd = {
    hugeDecimals: await deploy('OddToken', [40_000n, 'HUGE']),
    maxDecimals: await deploy('OddToken', [255n, 'MAX']),
    nulSymbol: await deploy('OddToken', [18n, '\0\0\0\0']),
  };
  for (const token of [odd.hugeDecimals, odd.maxDecimals]) await write(token, 'OddToken', 'mint', [ALICE.address, 1n]);

  // SENDER: 1.5 ETH to ALICE in a block stamped TRANSFER_TIMESTAMP (nonce 0), then 0.25 ETH to NOBODY (nonce 1).
  const sender = wallet(SENDER);
  const send = (to: Address, value: bigint) => sender.sendTransaction({ account: SENDER, chain: chain.chain, to, value, gasPrice: GAS_PRICE, type: 'legacy' });
  await rpc('evm_setNextBlockTimestamp', [TRANSFER_TIMESTAMP]);
  const transferHash = await send(ALICE.address, parseEther('1.5'));
  const transfer = await mined(transferHash);
  await mined(await send(NOBODY.address, parseEther('0.25')));

  // A reverted call: SENDER holds no USDC, so transfer(…, 1) reverts; a manual gas limit skips estimation.
  const revertedHash = await sender.writeContract({
    account: SENDER, chain: chain.chain, address: fx.usdc, abi: fx.usdcAbi, functionName: 'transfer', args: [ALICE.address, 1n], gas: 100_000n, gasPrice: GAS_PRICE, type: 'legacy',
  });
  const reverted = await mined(revertedHash);

  // An ERC-20 transfer by the deployer (minted 1 USDC first): one Transfer log.
  await fx.mint(DEPLOYER.address, 1_000_000n);
  const tokenTransferHash = await deployer.writeContract({ account: DEPLOYER, chain: chain.chain, address: fx.usdc, abi: fx.usdcAbi, functionName: 'transfer', args: [NOBODY.address, 400_000n] });
  const tokenTransfer = await mined(tokenTransferHash);

  const block = await pc.getBlock({ blockNumber: transfer.blockNumber });
  return {
    chain,
    usdc: fx.usdc,
    mkr,
    odd,
    registry,
    universalResolver,
    transfer: { hash: transferHash, block: transfer.blockNumber, timestamp: Number(block.timestamp) },
    reverted: { hash: revertedHash, block: reverted.blockNumber },
    tokenTransfer: { hash: tokenTransferHash, block: tokenTransfer.blockNumber },
    wallet,
    rpc,
    close: () => chain.close(),
  };
}

/** The app's variables for a world: every chain's RPC on the local node (one node serves them all), ENS on its universal resolver. */
export function onchainEnv(w: OnchainWorld, extra: Record<string, string> = {}): Record<string, string> {
  return {
    RPC_URL_ETHEREUM: w.chain.rpcUrl,
    RPC_URL_BASE: w.chain.rpcUrl,
    RPC_URL_POLYGON: w.chain.rpcUrl,
    ENS_UNIVERSAL_RESOLVER: w.universalResolver,
    // The local node answers in milliseconds, but the 2-core test machine is shared: a roomy deadline.
    UPSTREAM_DEADLINE_MS: '5000',
    ...extra,
  };
}
