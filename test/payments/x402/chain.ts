// In-process Hardhat 3 EDR chain + JSON-RPC server on 127.0.0.1:<random>, with TestUSDC and Multicall3 installed
// (and, with deployBatchSettlement, the batch-settlement contracts at the addresses @x402/evm hard-codes).
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from "@x402/evm";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import { createPublicClient, createWalletClient, defineChain, http, type Address } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { compileAll } from "./compile.ts";

export const MNEMONIC = "test test test test test test test test test test test junk";
export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11" as const;

export type LocalChain = Awaited<ReturnType<typeof startLocalChain>>;

/**
 * `options`: more settings of the simulated network (coinbase, blockGasLimit, initialBaseFeePerGas, ...).
 * `allowBlocksWithSameTimestamp: true` keeps automined blocks at wall-clock time; without it each block is
 * stamped at least 1 s after the last, the chain clock runs ahead, and short-lived EIP-3009 authorisations
 * (validBefore = now + maxTimeoutSeconds) expire on chain after a few dozen transactions.
 */
export async function startLocalChain(chainId = 31337, options: Record<string, unknown> = {}) {
  const hre = await createHardhatRuntimeEnvironment(
    {
      networks: {
        local: {
          type: "edr-simulated",
          chainType: "l1",
          chainId,
          accounts: { mnemonic: MNEMONIC, accountsBalance: 10n ** 21n },
          mining: { auto: true, interval: 0 },
          ...options,
        },
      },
    },
    {},
    process.cwd(),
  );
  // One server = one chain. (Each hre.network.connect() would be a separate in-memory chain.)
  const server = await hre.network.createServer({ network: "local" }, "127.0.0.1", 0);
  const { address, port } = await server.listen();
  const rpcUrl = `http://${address}:${port}`;
  const chain = defineChain({
    id: chainId,
    name: `edr-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  });
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50, cacheTime: 0 });
  return { hre, server, rpcUrl, chain, chainId, network: `eip155:${chainId}` as const, publicClient, close: () => server.close() };
}

export async function deployFixtures(c: LocalChain) {
  const arts = compileAll();
  const deployer = mnemonicToAccount(MNEMONIC, { addressIndex: 0 });
  const wallet = createWalletClient({ account: deployer, chain: c.chain, transport: http(c.rpcUrl), pollingInterval: 50 });

  // Multicall3 at its canonical address: deploy anywhere, then copy its runtime code with hardhat_setCode.
  const mcHash = await wallet.deployContract({ abi: arts.Multicall3.abi, bytecode: arts.Multicall3.bytecode });
  const mcAt = (await c.publicClient.waitForTransactionReceipt({ hash: mcHash })).contractAddress!;
  const mcCode = await c.publicClient.getCode({ address: mcAt });
  await c.publicClient.request({ method: "hardhat_setCode" as any, params: [MULTICALL3_ADDRESS, mcCode] as any });

  const hash = await wallet.deployContract({ abi: arts.TestUSDC.abi, bytecode: arts.TestUSDC.bytecode });
  const usdc = (await c.publicClient.waitForTransactionReceipt({ hash })).contractAddress! as Address;
  const mint = async (to: Address, amount: bigint) => {
    const h = await wallet.writeContract({ address: usdc, abi: arts.TestUSDC.abi, functionName: "mint", args: [to, amount] });
    await c.publicClient.waitForTransactionReceipt({ hash: h });
  };
  const balanceOf = async (who: Address) =>
    (await c.publicClient.readContract({ address: usdc, abi: arts.TestUSDC.abi, functionName: "balanceOf", args: [who] })) as bigint;
  return { usdc, usdcAbi: arts.TestUSDC.abi, mcCode: mcCode!, mint, balanceOf };
}

/**
 * The batch-settlement contract and its ERC-3009 deposit collector, deployed anywhere and their runtime code
 * copied to BATCH_SETTLEMENT_ADDRESS / ERC3009_DEPOSIT_COLLECTOR_ADDRESS, where @x402/evm expects them. The
 * collector is constructed with the canonical settlement address (its immutable lives in the runtime code).
 */
export async function deployBatchSettlement(c: LocalChain) {
  const arts = compileAll();
  const deployer = mnemonicToAccount(MNEMONIC, { addressIndex: 0 });
  const wallet = createWalletClient({ account: deployer, chain: c.chain, transport: http(c.rpcUrl), pollingInterval: 50 });
  const place = async (at: Address, art: (typeof arts)["BatchSettlement"], args: readonly unknown[] = []) => {
    const hash = await wallet.deployContract({ abi: art.abi, bytecode: art.bytecode, args });
    const deployed = (await c.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
    const code = await c.publicClient.getCode({ address: deployed });
    await c.publicClient.request({ method: "hardhat_setCode" as any, params: [at, code] as any });
  };
  await place(BATCH_SETTLEMENT_ADDRESS, arts.BatchSettlement);
  await place(ERC3009_DEPOSIT_COLLECTOR_ADDRESS, arts.ERC3009DepositCollector, [BATCH_SETTLEMENT_ADDRESS]);
  const settlementAbi = arts.BatchSettlement.abi;
  const channel = async (channelId: `0x${string}`) => {
    const [balance, totalClaimed] = (await c.publicClient.readContract({
      address: BATCH_SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: "channels", args: [channelId],
    })) as [bigint, bigint];
    return { balance, totalClaimed };
  };
  const receiver = async (who: Address, token: Address) => {
    const [totalClaimed, totalSettled] = (await c.publicClient.readContract({
      address: BATCH_SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: "receivers", args: [who, token],
    })) as [bigint, bigint];
    return { totalClaimed, totalSettled };
  };
  return { address: BATCH_SETTLEMENT_ADDRESS as Address, collector: ERC3009_DEPOSIT_COLLECTOR_ADDRESS as Address, abi: settlementAbi, channel, receiver };
}
