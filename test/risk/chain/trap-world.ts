// The trading-restriction traps of the token risk check (issue 38), deployed onto a running risk chain world
// (world.ts): each one trap written for the purpose (test/risk/chain/contracts), paired with WETH on the
// world's Uniswap V2 with 1,000,000 tokens against 100 WETH, and bought by three real holders (transactions
// of test accounts 1-3, in blocks of their own) so that the token has holders in its recent Transfer logs.
//   maxTx       a buy or sell over 0.5 % of the supply reverts (MaxTxToken)
//   maxWallet   no holding over 1 % of the supply (MaxWalletToken)
//   cooldown    a second sell within 60 s reverts (CooldownToken)
//   noTrading   every buy and sell reverts until enableTrading(), never called (TradingDisabledToken)
//   holderBlock only an address that received tokens in the current block may sell (HolderBlockToken)
//   laterTax    untaxed for LATER_TAX_AFTER_BLOCKS blocks after launch, then 25 % buy / 90 % sell (LaterTaxToken);
//               deployed last: every block mined after its launch counts
import { createWalletClient, http, parseEther, type Abi, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MNEMONIC } from '../../payments/x402/chain.ts';
import { compileContracts } from '../../payments/x402/compile.ts';
import { DEPLOYER, LIQUIDITY, SUPPLY, UNISWAP, type RiskChainWorld } from './world.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const TRAP_CONTRACTS = ['MaxTxToken', 'MaxWalletToken', 'CooldownToken', 'LaterTaxToken', 'TradingDisabledToken', 'HolderBlockToken'] as const;
export type TrapName = 'maxTx' | 'maxWallet' | 'cooldown' | 'laterTax' | 'noTrading' | 'holderBlock';

/** LaterTaxToken's untaxed blocks after launch: well below RISK_SIM_LATER_BLOCKS's default (300). */
export const LATER_TAX_AFTER_BLOCKS = 30n;
/** The three real holders: test accounts 1-3 of the mnemonic, each buying with this much ETH. */
export const HOLDERS = [1, 2, 3].map((i) => mnemonicToAccount(MNEMONIC, { addressIndex: i }));
export const HOLDER_BUY = parseEther('0.05');

export interface TrapTokens {
  tokens: Record<TrapName, Address>;
  pairs: Record<TrapName, Address>;
  /** The holders that bought each token (none for noTrading, whose buys revert). */
  holders: Record<TrapName, Address[]>;
}

const SPEC: Record<TrapName, { contract: (typeof TRAP_CONTRACTS)[number]; name: string; symbol: string; extra?: unknown[] }> = {
  maxTx: { contract: 'MaxTxToken', name: 'Max Tx', symbol: 'MAXTX' },
  maxWallet: { contract: 'MaxWalletToken', name: 'Max Wallet', symbol: 'MAXWAL' },
  cooldown: { contract: 'CooldownToken', name: 'Cooldown', symbol: 'COOL' },
  noTrading: { contract: 'TradingDisabledToken', name: 'No Trading', symbol: 'CLOSED' },
  holderBlock: { contract: 'HolderBlockToken', name: 'Holder Block', symbol: 'HBLOCK' },
  // Last, so that the blocks the other deployments mine do not end its untaxed launch window.
  laterTax: { contract: 'LaterTaxToken', name: 'Later Tax', symbol: 'LATER', extra: [LATER_TAX_AFTER_BLOCKS] },
};

export async function deployTrapTokens(w: RiskChainWorld, only: readonly TrapName[] = Object.keys(SPEC) as TrapName[]): Promise<TrapTokens> {
  const arts = compileContracts(here, TRAP_CONTRACTS);
  const pc = w.chain.publicClient;
  const walletOf = (account: typeof DEPLOYER) => createWalletClient({ account, chain: w.chain.chain, transport: http(w.chain.rpcUrl), pollingInterval: 50 });
  const mined = async (hash: Hex) => {
    const receipt = await pc.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  };
  const deployer = walletOf(DEPLOYER);
  const write = async (wallet: ReturnType<typeof walletOf>, address: Address, abi: Abi, functionName: string, args: unknown[], value?: bigint) =>
    mined(await wallet.writeContract({ address, abi, functionName, args, value, account: wallet.account!, chain: w.chain.chain }));

  const out: TrapTokens = { tokens: {} as TrapTokens['tokens'], pairs: {} as TrapTokens['pairs'], holders: {} as TrapTokens['holders'] };
  // The world's pairs took most of the deployer's test ether: top it up for 100 WETH per trap.
  await pc.request({ method: 'hardhat_setBalance' as never, params: [DEPLOYER.address, '0xd3c21bcecceda1000000'] as never });
  // Far in the future: the chain's clock may have been moved ahead (evidence-world.ts's timelocked proxy).
  const deadline = () => 2n ** 40n;
  for (const trap of only) {
    const spec = SPEC[trap];
    const a = arts[spec.contract];
    const hash = await deployer.deployContract({ abi: a.abi, bytecode: a.bytecode, args: [spec.name, spec.symbol, SUPPLY, ...(spec.extra ?? [])], account: DEPLOYER, chain: w.chain.chain });
    const token = (await pc.waitForTransactionReceipt({ hash })).contractAddress!;
    await write(deployer, w.factory, UNISWAP.factory.abi, 'createPair', [token, w.weth]);
    const pair = (await pc.readContract({ address: w.factory, abi: UNISWAP.factory.abi, functionName: 'getPair', args: [token, w.weth] })) as Address;
    await write(deployer, token, a.abi, 'setPair', [pair]);
    await write(deployer, token, a.abi, 'approve', [w.router, LIQUIDITY.tokens]);
    await write(deployer, w.router, UNISWAP.router.abi, 'addLiquidityETH', [token, LIQUIDITY.tokens, 0n, 0n, DEPLOYER.address, deadline()], LIQUIDITY.weth);
    out.tokens[trap] = token;
    out.pairs[trap] = pair;
    out.holders[trap] = [];
    if (trap === 'noTrading') continue;
    for (const holder of HOLDERS) {
      await write(walletOf(holder), w.router, UNISWAP.router.abi, 'swapExactETHForTokensSupportingFeeOnTransferTokens', [0n, [w.weth, token], holder.address, deadline()], HOLDER_BUY);
      out.holders[trap].push(holder.address);
    }
  }
  return out;
}
