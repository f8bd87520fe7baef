// The local chain of the token risk check's on-chain tests: an in-process Hardhat EDR node (test/payments/x402/chain.ts)
// with Uniswap V2 as its own npm packages ship it (@uniswap/v2-core's factory and pair, @uniswap/v2-periphery's
// Router02 and WETH9, deployed from their build artifacts unchanged), and test tokens written for the purpose
// (test/risk/chain/contracts): a plain token, a honeypot whose sells revert for all but its owner, a 10 % sell
// tax, a token behind an EIP-1967 proxy with a live admin, a token with no pair (its owner renounced), and an
// EIP-1167 clone of the plain token. Each traded token gets a pair with 1,000,000 tokens against 100 WETH.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWalletClient, encodeFunctionData, getContractAddress, http, keccak256, parseEther, type Abi, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { MNEMONIC, startLocalChain, type LocalChain } from '../../payments/x402/chain.ts';
import { compileContracts } from '../../payments/x402/compile.ts';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
export const TOKEN_CONTRACTS = ['PlainToken', 'HoneypotToken', 'SellTaxToken', 'UpgradeableToken', 'Eip1967Proxy'] as const;

interface UniswapArtifact {
  abi: Abi;
  bytecode: string;
}
const artifact = (path: string): { abi: Abi; bytecode: Hex } => {
  const a = require(path) as UniswapArtifact;
  return { abi: a.abi, bytecode: (a.bytecode.startsWith('0x') ? a.bytecode : `0x${a.bytecode}`) as Hex };
};
export const UNISWAP = {
  factory: artifact('@uniswap/v2-core/build/UniswapV2Factory.json'),
  pair: artifact('@uniswap/v2-core/build/UniswapV2Pair.json'),
  router: artifact('@uniswap/v2-periphery/build/UniswapV2Router02.json'),
  weth: artifact('@uniswap/v2-periphery/build/WETH9.json'),
};
/** The init code hash UniswapV2Library.pairFor (in Router02) hard-codes: the router finds a pair only if its code hashes to it. */
export const ROUTER_INIT_CODE_HASH = '0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f';

export const DEPLOYER = mnemonicToAccount(MNEMONIC, { addressIndex: 0 });
/** The proxy's admin: a live address (it holds no key the tests use; its slot is what counts). */
export const PROXY_ADMIN = mnemonicToAccount(MNEMONIC, { addressIndex: 5 }).address;

export const LIQUIDITY = { tokens: 1_000_000n * 10n ** 18n, weth: parseEther('100') };
export const SUPPLY = 10_000_000n * 10n ** 18n;

export interface RiskChainWorld {
  chain: LocalChain;
  weth: Address;
  factory: Address;
  router: Address;
  tokens: {
    plain: Address;
    honeypot: Address;
    sellTax: Address;
    /** The EIP-1967 proxy (the token's address) and its implementation. */
    proxied: Address;
    implementation: Address;
    noPair: Address;
    /** An EIP-1167 clone of the plain token's code (placed with hardhat_setCode). */
    clone: Address;
  };
  pairs: Record<'plain' | 'honeypot' | 'sellTax' | 'proxied', Address>;
  /** The deployer: owner of every token but noPair (renounced). */
  owner: Address;
  close(): Promise<void>;
}

export async function startRiskChainWorld(): Promise<RiskChainWorld> {
  const chain = await startLocalChain(31337);
  const arts = compileContracts(here, TOKEN_CONTRACTS);
  const pc = chain.publicClient;
  const wallet = createWalletClient({ account: DEPLOYER, chain: chain.chain, transport: http(chain.rpcUrl), pollingInterval: 50 });
  const mined = async (hash: Hex) => {
    const receipt = await pc.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };
  const deploy = async (a: { abi: Abi; bytecode: Hex }, args: unknown[] = []) =>
    (await mined(await wallet.deployContract({ abi: a.abi, bytecode: a.bytecode, args, account: DEPLOYER, chain: chain.chain }))).contractAddress!;
  const write = async (address: Address, abi: Abi, functionName: string, args: unknown[], value?: bigint) =>
    mined(await wallet.writeContract({ address, abi, functionName, args, value, account: DEPLOYER, chain: chain.chain }));

  const weth = await deploy(UNISWAP.weth);
  const factory = await deploy(UNISWAP.factory, [DEPLOYER.address]);
  const router = await deploy(UNISWAP.router, [factory, weth]);

  const plain = await deploy(arts.PlainToken, ['Plain', 'PLAIN', SUPPLY]);
  const honeypot = await deploy(arts.HoneypotToken, ['Honeypot', 'HONEY', SUPPLY]);
  const sellTax = await deploy(arts.SellTaxToken, ['Sell Tax', 'TAX10', SUPPLY]);
  const implementation = await deploy(arts.UpgradeableToken);
  const init = encodeFunctionData({ abi: arts.UpgradeableToken.abi, functionName: 'initialize', args: ['Proxied', 'PROXY', SUPPLY, DEPLOYER.address] });
  const proxied = await deploy(arts.Eip1967Proxy, [implementation, PROXY_ADMIN, init]);
  const noPair = await deploy(arts.PlainToken, ['No Pair', 'NOPAIR', SUPPLY]);
  await write(noPair, arts.PlainToken.abi, 'renounceOwnership', []);

  // The plain token's code as an EIP-1167 clone: 45 bytes that delegate every call to it.
  const clone = '0x00000000000000000000000000000000c10e1167' as Address;
  const cloneCode = `0x363d3d373d3d3d363d73${plain.slice(2).toLowerCase()}5af43d82803e903d91602b57fd5bf3`;
  await pc.request({ method: 'hardhat_setCode' as never, params: [clone, cloneCode] as never });

  const pairs = {} as RiskChainWorld['pairs'];
  const deadline = BigInt(Math.floor(Date.now() / 1000) + 3600);
  for (const [name, token, abi] of [
    ['plain', plain, arts.PlainToken.abi],
    ['honeypot', honeypot, arts.HoneypotToken.abi],
    ['sellTax', sellTax, arts.SellTaxToken.abi],
    ['proxied', proxied, arts.UpgradeableToken.abi],
  ] as const) {
    await write(factory, UNISWAP.factory.abi, 'createPair', [token, weth]);
    const pair = (await pc.readContract({ address: factory, abi: UNISWAP.factory.abi, functionName: 'getPair', args: [token, weth] })) as Address;
    if (name === 'honeypot' || name === 'sellTax') await write(token, abi, 'setPair', [pair]);
    await write(token, abi, 'approve', [router, LIQUIDITY.tokens]);
    await write(router, UNISWAP.router.abi, 'addLiquidityETH', [token, LIQUIDITY.tokens, 0n, 0n, DEPLOYER.address, deadline], LIQUIDITY.weth);
    pairs[name] = pair;
  }

  return {
    chain,
    weth,
    factory,
    router,
    tokens: { plain, honeypot, sellTax, proxied, implementation, noPair, clone },
    pairs,
    owner: DEPLOYER.address,
    close: () => chain.close(),
  };
}

/** The pair address UniswapV2Library.pairFor computes (CREATE2 with the hard-coded init code hash). */
export function pairFor(factory: Address, a: Address, b: Address): Address {
  const [t0, t1] = a.toLowerCase() < b.toLowerCase() ? [a, b] : [b, a];
  const salt = keccak256(`0x${t0.slice(2)}${t1.slice(2)}`);
  return getContractAddress({ opcode: 'CREATE2', from: factory, salt, bytecodeHash: ROUTER_INIT_CODE_HASH });
}
