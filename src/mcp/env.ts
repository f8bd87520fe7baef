// The MCP server's settings, from its environment (what an agent host's `mcpServers` entry sets). A bad value
// stops it with one line on stderr naming the variable.
import { MarketgateError, parseAssets, parseNetworks, solanaAddress, type ClientOptions, type PaymentAsset } from '../client/index.ts';

export const MCP_ENV = {
  MARKETGATE_URL: 'the marketgate server to call (default http://127.0.0.1:3000)',
  MARKETGATE_API_KEY: 'an API key: paid tools are served on it, nothing is paid with x402',
  MARKETGATE_WALLET_KEY: 'a private key (0x + 64 hex digits) that pays paid tools with x402 (USDC)',
  MARKETGATE_SOLANA_KEY: "a Solana secret key (64 bytes in base58, as Solana wallets export it) that pays paid tools with x402 (USDC on Solana)",
  MARKETGATE_PREFER: 'with both wallets, which pays when the server offers both: base (default) or solana',
  MARKETGATE_SOLANA_RPC_URL: "a Solana RPC endpoint the payment's transaction is built against (default: the network's public RPC)",
  MARKETGATE_MAX_SPEND_USD: 'the most the wallets pay in all while this process runs, in dollars (default 0.10)',
  MARKETGATE_BATCH: "auto (default): pay with batch-settlement (one deposit, then vouchers) when the server offers it and MARKETGATE_MAX_SPEND_USD leaves room for the deposit; true: whenever offered; false: exact only",
  MARKETGATE_RPC_URL: "an RPC endpoint of the payment network: batch-settlement's channel reads, and the reads that release a payment the chain shows was never used",
  MARKETGATE_ASSETS: 'tokens to pay in besides USDC, for test networks: network:address:decimals, comma-separated',
  MARKETGATE_NETWORKS: "the networks the wallet pays on, CAIP-2 ids comma-separated (default: MARKETGATE_ASSETS' networks, else eip155:8453)",
} as const;

export class EnvError extends Error {
  override name = 'EnvError';
}

export interface McpSettings {
  client: ClientOptions;
  /** What pays for paid tools, in words, for the start-up line and the tools' errors. */
  paysWith: 'an API key' | 'a wallet (x402)' | 'nothing';
}

export function readEnv(env: NodeJS.ProcessEnv): McpSettings {
  const get = (name: keyof typeof MCP_ENV) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const url = get('MARKETGATE_URL') ?? 'http://127.0.0.1:3000';
  const wallet = get('MARKETGATE_WALLET_KEY');
  if (wallet !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(wallet)) throw new EnvError('MARKETGATE_WALLET_KEY must be a private key: 0x followed by 64 hex digits');
  const solanaKey = get('MARKETGATE_SOLANA_KEY');
  if (solanaKey !== undefined) {
    try {
      solanaAddress(solanaKey);
    } catch (err) {
      throw new EnvError(`MARKETGATE_SOLANA_KEY ${err instanceof MarketgateError ? err.error : 'must be a 64-byte secret key in base58'}`);
    }
  }
  const prefer = get('MARKETGATE_PREFER');
  if (prefer !== undefined && prefer !== 'base' && prefer !== 'solana') throw new EnvError('MARKETGATE_PREFER must be base or solana');
  const solanaRpc = get('MARKETGATE_SOLANA_RPC_URL');
  if (solanaRpc !== undefined && !/^https?:\/\//.test(solanaRpc)) throw new EnvError(`MARKETGATE_SOLANA_RPC_URL must be an http(s) URL, got ${JSON.stringify(solanaRpc)}`);
  const max = get('MARKETGATE_MAX_SPEND_USD');
  if (max !== undefined && !/^\d+(\.\d+)?$/.test(max)) throw new EnvError(`MARKETGATE_MAX_SPEND_USD must be a number of dollars such as 0.10, got ${JSON.stringify(max)}`);
  const batch = get('MARKETGATE_BATCH');
  if (batch !== undefined && batch !== 'auto' && batch !== 'true' && batch !== 'false') throw new EnvError('MARKETGATE_BATCH must be auto, true or false');
  const rpcUrl = get('MARKETGATE_RPC_URL');
  const apiKey = get('MARKETGATE_API_KEY');
  const assetList = assets(get('MARKETGATE_ASSETS'));
  const allowed = networks(get('MARKETGATE_NETWORKS'));
  return {
    client: {
      baseUrl: url,
      ...(apiKey ? { apiKey } : {}),
      ...(wallet ? { wallet: wallet as `0x${string}` } : {}),
      ...(solanaKey ? { solanaWallet: solanaKey } : {}),
      ...(prefer ? { prefer } : {}),
      ...(max !== undefined ? { maxSpendUsd: Number(max) } : {}),
      ...(batch === 'false' ? { batch: false } : rpcUrl ? { batch: { rpcUrl, use: batch === 'true' ? true : 'auto' } } : batch === 'true' ? { batch: true } : {}),
      assets: assetList,
      ...allowed,
      ...(rpcUrl || solanaRpc ? { rpcUrls: { ...(rpcUrl ? releaseRpc(rpcUrl, allowed.networks ?? assetList.map((a) => a.network)) : {}), ...(solanaRpc ? solanaRpcs(solanaRpc, allowed.networks ?? assetList.map((a) => a.network)) : {}) } } : {}),
    },
    paysWith: apiKey ? 'an API key' : wallet || solanaKey ? 'a wallet (x402)' : 'nothing',
  };
}

/** `eip155:31337:0xabc…:6,…`: see parseAssets. */
function assets(value: string | undefined): PaymentAsset[] {
  try {
    return parseAssets(value ?? '');
  } catch (err) {
    throw new EnvError(`MARKETGATE_ASSETS: ${err instanceof MarketgateError ? err.error : String(err)}`);
  }
}

/**
 * The one RPC URL, for every EVM network the wallet may pay on (the client's default, Base, when none is named),
 * so that a payment the server refused or never confirmed is released once the chain shows it expired unused.
 * The client checks each network's chain id against the node's, so a URL of another chain releases nothing.
 */
function releaseRpc(url: string, payable: string[]): Record<string, string> {
  const evm = [...new Set(payable.length ? payable : ['eip155:8453'])].filter((n) => n.startsWith('eip155:'));
  return Object.fromEntries(evm.map((n) => [n, url]));
}

/** The one Solana RPC URL, for every Solana network the wallet may pay on (Solana mainnet when none is named). */
function solanaRpcs(url: string, payable: string[]): Record<string, string> {
  const svm = payable.filter((n) => n.startsWith('solana:'));
  return Object.fromEntries((svm.length ? [...new Set(svm)] : ['solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp']).map((n) => [n, url]));
}

/** `eip155:8453,eip155:84532`: see parseNetworks. */
function networks(value: string | undefined): Pick<ClientOptions, 'networks'> {
  if (value === undefined) return {};
  try {
    return { networks: parseNetworks(value) };
  } catch (err) {
    throw new EnvError(`MARKETGATE_NETWORKS: ${err instanceof MarketgateError ? err.error : String(err)}`);
  }
}
