// The MCP server's settings, from its environment (what an agent host's `mcpServers` entry sets). A bad value
// stops it with one line on stderr naming the variable.
import { MarketgateError, parseAssets, type ClientOptions, type PaymentAsset } from '../client/index.ts';

export const MCP_ENV = {
  MARKETGATE_URL: 'the marketgate server to call (default http://127.0.0.1:3000)',
  MARKETGATE_API_KEY: 'an API key: paid tools are served on it, nothing is paid with x402',
  MARKETGATE_WALLET_KEY: 'a private key (0x + 64 hex digits) that pays paid tools with x402 (USDC)',
  MARKETGATE_MAX_SPEND_USD: 'the most the wallet pays while this process runs, in dollars (default 0.10)',
  MARKETGATE_BATCH: 'true: pay with batch-settlement when the server offers it (one deposit, then vouchers)',
  MARKETGATE_RPC_URL: "an RPC endpoint of the payment network, for batch-settlement's channel reads",
  MARKETGATE_ASSETS: 'tokens to pay in besides USDC, for test networks: network:address:decimals, comma-separated',
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
  const max = get('MARKETGATE_MAX_SPEND_USD');
  if (max !== undefined && !/^\d+(\.\d+)?$/.test(max)) throw new EnvError(`MARKETGATE_MAX_SPEND_USD must be a number of dollars such as 0.10, got ${JSON.stringify(max)}`);
  const batch = get('MARKETGATE_BATCH');
  if (batch !== undefined && batch !== 'true' && batch !== 'false') throw new EnvError('MARKETGATE_BATCH must be true or false');
  const rpcUrl = get('MARKETGATE_RPC_URL');
  const apiKey = get('MARKETGATE_API_KEY');
  return {
    client: {
      baseUrl: url,
      ...(apiKey ? { apiKey } : {}),
      ...(wallet ? { wallet: wallet as `0x${string}` } : {}),
      ...(max !== undefined ? { maxSpendUsd: Number(max) } : {}),
      ...(batch === 'true' ? { batch: rpcUrl ? { rpcUrl } : true } : {}),
      assets: assets(get('MARKETGATE_ASSETS')),
    },
    paysWith: apiKey ? 'an API key' : wallet ? 'a wallet (x402)' : 'nothing',
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
