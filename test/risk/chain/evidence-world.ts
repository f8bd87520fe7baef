// The local chain of test/risk/chain/world.ts with what the liquidity, capability, owner-kind and impersonation
// reads need (test/risk/chain/contracts): a dollar stablecoin (6 decimals) paired with WETH at $2,000, tokens
// whose LP is burned, locked in a locker, or thin; one token per owner-only power; tokens owned by a Safe and by
// a timelock; a proxy administered by a timelock; a token named like USDC. Every figure a test asserts is set here.
import { createWalletClient, encodeFunctionData, http, parseEther, parseUnits, type Abi, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { MNEMONIC } from '../../payments/x402/chain.ts';
import { compileContracts, type Artifact } from '../../payments/x402/compile.ts';
import { DEPLOYER, SUPPLY, UNISWAP, startRiskChainWorld, type RiskChainWorld } from './world.ts';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const EVIDENCE_CONTRACTS = [
  'PlainToken',
  'OwnedToken',
  'StableToken',
  'SafeWallet',
  'Timelock',
  'LpLocker',
  'MintToken',
  'BlacklistToken',
  'PauseToken',
  'FeeSetterToken',
  'LimitSetterToken',
  'BalanceSetterToken',
  'UpgradeableToken',
  'Eip1967Proxy',
  'SellTaxToken',
] as const;
export type EvidenceContract = (typeof EVIDENCE_CONTRACTS)[number];

/** WETH's price in the stable pair: 20,000 TDOL against 10 WETH. */
export const STABLE_PAIR = { weth: parseEther('10'), stable: parseUnits('20000', 6) };
export const USD_PER_ETH = 2000;
/** The timelock's minimum delay: two days. */
export const TIMELOCK_DELAY_S = 172_800;
export const SAFE_OWNERS = [1, 2, 3].map((i) => mnemonicToAccount(MNEMONIC, { addressIndex: i }).address);
export const SAFE_THRESHOLD = 2;

export type LpFate = 'owner' | 'burn' | 'lock';
export interface ListOptions {
  /** WETH in the pair (default 100). */
  weth?: bigint;
  /** What becomes of the deployer's LP tokens: kept (owner), sent to 0x…dEaD (burn), or locked in the locker. */
  lp?: LpFate;
  /** Tell the token its pair (tokens whose transfers to the pair are sells). */
  setPair?: boolean;
}

export interface EvidenceWorld extends RiskChainWorld {
  stable: Address;
  stablePair: Address;
  locker: Address;
  safe: Address;
  timelock: Address;
  arts: Record<EvidenceContract, Artifact>;
  /** Deploys `contract` with `args`, gives it a pair with `weth` against 1,000,000 tokens, and does `lp` with the LP tokens. */
  listed(contract: EvidenceContract, args: unknown[], options?: ListOptions): Promise<{ token: Address; pair: Address }>;
  /** The same for a token already deployed (its ABI: `contract`'s). */
  list(token: Address, contract: EvidenceContract, options?: ListOptions): Promise<{ token: Address; pair: Address }>;
  deploy(contract: EvidenceContract, args?: unknown[]): Promise<Address>;
  write(address: Address, contract: EvidenceContract | 'pair', functionName: string, args: unknown[], value?: bigint): Promise<void>;
}

export async function startEvidenceWorld(): Promise<EvidenceWorld> {
  const w = await startRiskChainWorld();
  const arts = compileContracts(here, EVIDENCE_CONTRACTS);
  const pc = w.chain.publicClient;
  const wallet = createWalletClient({ account: DEPLOYER, chain: w.chain.chain, transport: http(w.chain.rpcUrl), pollingInterval: 50 });
  const mined = async (hash: Hex) => {
    const receipt = await pc.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };
  const abiOf = (c: EvidenceContract | 'pair'): Abi => (c === 'pair' ? UNISWAP.pair.abi : (arts[c].abi as Abi));
  const deploy = async (c: EvidenceContract, args: unknown[] = []) =>
    (await mined(await wallet.deployContract({ abi: abiOf(c), bytecode: arts[c].bytecode, args, account: DEPLOYER, chain: w.chain.chain }))).contractAddress!;
  const write = async (address: Address, c: EvidenceContract | 'pair', functionName: string, args: unknown[], value?: bigint) => {
    await mined(await wallet.writeContract({ address, abi: abiOf(c), functionName, args, value, account: DEPLOYER, chain: w.chain.chain }));
  };
  // The chain's clock may be moved ahead (timelockedProxy): deadlines far in the future.
  const deadline = () => 2n ** 40n;
  const pairOf = async (a: Address, b: Address) => (await pc.readContract({ address: w.factory, abi: UNISWAP.factory.abi, functionName: 'getPair', args: [a, b] })) as Address;

  // Every listed token's pair takes WETH: the deployer is given enough for dozens (1,000,000 ETH).
  await pc.request({ method: 'hardhat_setBalance' as never, params: [DEPLOYER.address, `0x${(10n ** 24n).toString(16)}`] as never });
  const stable = await deploy('StableToken', [parseUnits('1000000', 6)]);
  await write(stable, 'StableToken', 'approve', [w.router, STABLE_PAIR.stable]);
  await mined(
    await wallet.writeContract({
      address: w.router,
      abi: UNISWAP.router.abi,
      functionName: 'addLiquidityETH',
      args: [stable, STABLE_PAIR.stable, 0n, 0n, DEPLOYER.address, deadline()],
      value: STABLE_PAIR.weth,
      account: DEPLOYER,
      chain: w.chain.chain,
    }),
  );
  const stablePair = await pairOf(stable, w.weth);
  const locker = await deploy('LpLocker');
  const safe = await deploy('SafeWallet', [SAFE_OWNERS, BigInt(SAFE_THRESHOLD)]);
  const timelock = await deploy('Timelock', [BigInt(TIMELOCK_DELAY_S), DEPLOYER.address]);

  const list: EvidenceWorld['list'] = async (token, contract, { weth = parseEther('100'), lp = 'owner', setPair = false } = {}) => {
    const tokens = 1_000_000n * 10n ** 18n;
    await mined(await wallet.writeContract({ address: w.factory, abi: UNISWAP.factory.abi, functionName: 'createPair', args: [token, w.weth], account: DEPLOYER, chain: w.chain.chain }));
    const pair = await pairOf(token, w.weth);
    if (setPair) await write(token, contract, 'setPair', [pair]);
    await write(token, contract, 'approve', [w.router, tokens]);
    await mined(
      await wallet.writeContract({
        address: w.router,
        abi: UNISWAP.router.abi,
        functionName: 'addLiquidityETH',
        args: [token, tokens, 0n, 0n, DEPLOYER.address, deadline()],
        value: weth,
        account: DEPLOYER,
        chain: w.chain.chain,
      }),
    );
    const lpBalance = (await pc.readContract({ address: pair, abi: UNISWAP.pair.abi, functionName: 'balanceOf', args: [DEPLOYER.address] })) as bigint;
    if (lp === 'burn') await write(pair, 'pair', 'transfer', ['0x000000000000000000000000000000000000dEaD', lpBalance]);
    if (lp === 'lock') {
      await write(pair, 'pair', 'approve', [locker, lpBalance]);
      await write(locker, 'LpLocker', 'lock', [pair, lpBalance, 2n ** 40n]);
    }
    return { token, pair };
  };
  const listed: EvidenceWorld['listed'] = async (contract, args, options) => list(await deploy(contract, args), contract, options);

  return { ...w, stable, stablePair, locker, safe, timelock, arts, list, listed, deploy, write };
}

/**
 * A proxy whose admin and owner are the world's timelock, over a fresh UpgradeableToken. Its supply is the
 * timelock's: the deployer takes it out the timelock's way (scheduled, the delay passed on the chain's clock, executed).
 */
export async function timelockedProxy(w: EvidenceWorld): Promise<{ token: Address; implementation: Address }> {
  const implementation = await w.deploy('UpgradeableToken');
  const abi = w.arts.UpgradeableToken.abi as Abi;
  const init = encodeFunctionData({ abi, functionName: 'initialize', args: ['Timelocked', 'TLOCK', SUPPLY, w.timelock] });
  const token = await w.deploy('Eip1967Proxy', [implementation, w.timelock, init]);
  const transfer = encodeFunctionData({ abi, functionName: 'transfer', args: [DEPLOYER.address, SUPPLY] });
  await w.write(w.timelock, 'Timelock', 'schedule', [token, transfer]);
  await w.chain.publicClient.request({ method: 'evm_increaseTime' as never, params: [TIMELOCK_DELAY_S] as never });
  await w.write(w.timelock, 'Timelock', 'execute', [token, transfer]);
  return { token, implementation };
}
