// Etherscan API V2 gas oracle (key required by Etherscan; without one /v1/gas uses eth_feeHistory instead).
//   GET {base}/v2/api?chainid=1&module=gastracker&action=gasoracle&apikey=KEY
//   → {status: "1", message: "OK", result: {LastBlock, SafeGasPrice, ProposeGasPrice, FastGasPrice, suggestBaseFee, gasUsedRatio}}
// Quirks: every value is a string; prices are gwei and may be fractional ("0.496839934"); gasUsedRatio is
// one comma-joined string. Errors arrive as HTTP 200 with status "0", message "NOTOK" and the reason in
// `result` (a string then): "Max rate limit reached, ..." is its rate limit, anything else an error.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { decimal, optionalDecimal } from './wire.ts';

export const ETHERSCAN = 'etherscan';

/** Ethereum mainnet. */
const CHAIN_ID = '1';

/** Etherscan's status "0" is a failure whatever the HTTP status; its rate-limit message is a rate limit. */
export const ETHERSCAN_PROTOCOL: Protocol = {
  classify(body) {
    if (!isRecord(body) || body.status !== '0') return undefined;
    const reason = typeof body.result === 'string' ? body.result : '';
    const detail = [typeof body.message === 'string' ? body.message : '', reason].filter(Boolean).join(': ') || 'status 0';
    return /rate limit/i.test(reason) ? { kind: 'rate_limited', detail } : { kind: 'provider_error', detail };
  },
};

export interface GasOracle {
  /** Newest block the estimate is based on. */
  last_block: number;
  /** Gas prices (base fee + priority fee), gwei. */
  safe_gwei: number;
  propose_gwei: number;
  fast_gwei: number;
  /** Etherscan's suggestBaseFee, gwei; null when not given. */
  base_fee_gwei: number | null;
}

const gasOracleSchema = z
  .object({
    status: z.literal('1'),
    result: z.object({
      LastBlock: z.string().regex(/^\d+$/).transform(Number),
      SafeGasPrice: decimal,
      ProposeGasPrice: decimal,
      FastGasPrice: decimal,
      suggestBaseFee: optionalDecimal,
    }),
  })
  .transform(({ result: r }): GasOracle => ({
    last_block: r.LastBlock,
    safe_gwei: r.SafeGasPrice,
    propose_gwei: r.ProposeGasPrice,
    fast_gwei: r.FastGasPrice,
    base_fee_gwei: r.suggestBaseFee,
  }));

export interface EtherscanSettings {
  baseUrl: string;
  apiKey: string | undefined;
  /** Also the TTL of the eth_feeHistory call /v1/gas makes without a key. */
  gasTtlS: number;
}

function createEtherscan(ctx: SourceContext<EtherscanSettings>) {
  const { baseUrl, apiKey, gasTtlS } = ctx.settings;
  return {
    /** Whether ETHERSCAN_API_KEY is set (Etherscan answers every keyless call with an error). */
    configured: apiKey !== undefined,

    /** Ethereum mainnet gas oracle. */
    async gasOracle(): Promise<Sourced<GasOracle>> {
      const query = new URLSearchParams({ chainid: CHAIN_ID, module: 'gastracker', action: 'gasoracle', ...(apiKey ? { apikey: apiKey } : {}) });
      return ctx.fetch({ url: `${baseUrl}/v2/api?${query}`, schema: gasOracleSchema, protocol: ETHERSCAN_PROTOCOL, ttlS: gasTtlS });
    },
  };
}

export type Etherscan = ReturnType<typeof createEtherscan>;

export const etherscanSource = defineSource({
  key: 'etherscan',
  name: ETHERSCAN,
  title: 'Etherscan API V2 (gas oracle)',
  docs: 'https://docs.etherscan.io/api-reference/endpoint/gasoracle',
  notes:
    'Needs ETHERSCAN_API_KEY (free plan: 3 calls/s, 100,000 calls/day); without it /v1/gas derives its figures from eth_feeHistory on RPC_URL_ETHEREUM. ' +
    'Errors arrive as HTTP 200 with status "0" ("Max rate limit reached" = rate limited).',
  env: {
    ETHERSCAN_BASE_URL: env.url('https://api.etherscan.io', 'Etherscan API (V2, /v2/api).'),
    ETHERSCAN_API_KEY: env.secret('Etherscan API key; when set, /v1/gas uses the Etherscan gas oracle instead of eth_feeHistory.'),
    CACHE_TTL_GAS_S: env.ttl(12, 'gas estimates (Etherscan, or eth_feeHistory without a key)'),
  },
  settings: (e) => ({ baseUrl: e.ETHERSCAN_BASE_URL, apiKey: e.ETHERSCAN_API_KEY, gasTtlS: e.CACHE_TTL_GAS_S }),
  create: createEtherscan,
});
