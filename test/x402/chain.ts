// In-process Hardhat 3 EDR chain + JSON-RPC server on 127.0.0.1:<random>, with TestUSDC and Multicall3 installed.
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import { createPublicClient, createWalletClient, defineChain, http, type Address } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { compileAll } from "./compile.ts";

export const MNEMONIC = "test test test test test test test test test test test junk";
export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11" as const;

export type LocalChain = Awaited<ReturnType<typeof startLocalChain>>;

/** `options`: more settings of the simulated network (coinbase, blockGasLimit, initialBaseFeePerGas, ...). */
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
