// x402's settings, declared as data beside the module that reads them (as db/env.ts and redis/env.ts keep theirs).
// config.ts lists them in its access section (so they are parsed, validated and documented with every other
// variable) and hands the payments module the typed result, PaymentSettings; what no single variable can check
// (a custom token needs its EIP-712 name, coinbase-cdp needs its keys, batch settlement's timing) is checked here.
import { z } from 'zod';
import type { SettlingFees } from '../db/settling-costs.ts';
import { ConfigError, env, type EnvValues } from '../lib/env.ts';
import { X402_NETWORKS } from './networks.ts';
import { atomicAmount } from './core/price.ts';
import { SVM_PAYMENTS_ENV, svmPaymentSettings, type SvmPaymentSettings } from './svm-settings.ts';

const evmAddress = (what: string) =>
  z
    .string()
    .regex(/^0[xX][0-9a-fA-F]{40}$/, `${what} (0x + 40 hex)`)
    .transform((v) => `0x${v.slice(2)}`);

/** The variables of x402 payments (and of Coinbase CDP's facilitator). */
export const PAYMENTS_ENV = {
  X402_ENABLED: env.bool(true, 'x402 pay-per-call on paid routes (active only once X402_PAY_TO is set).'),
  X402_NETWORK: env.custom(
    z.string().refine((v) => v in X402_NETWORKS || /^eip155:\d+$/.test(v), 'base, base-sepolia, or a CAIP-2 id eip155:<chain id>'),
    'base',
    'base (eip155:8453), base-sepolia (eip155:84532), or any eip155:<chain id> (then X402_ASSET is required).',
  ),
  X402_PRICE: env.custom(z.string().regex(/^\$\d+(\.\d+)?$/, 'a dollar price such as $0.001'), '$0.001', 'Price of one paid call.'),
  X402_PAY_TO: env.custom(evmAddress('an EVM address'), undefined, 'Address that receives payments; while unset, paid routes need an API key.', { example: '0x...' }),
  X402_ASSET: env.custom(evmAddress('an ERC-20 token address'), undefined, 'Token paid in (default: USDC of X402_NETWORK).', { example: '0x...' }),
  X402_ASSET_DECIMALS: env.int(0, 36, 6, 'Decimals of X402_ASSET ($0.001 = 1000 units at 6).'),
  X402_ASSET_NAME: env.optionalText("EIP-712 domain name of X402_ASSET (required for a token other than the network's USDC).", 'USD Coin'),
  X402_ASSET_VERSION: env.text('2', 'EIP-712 domain version of X402_ASSET.', "the token's EIP-712 domain version"),
  X402_MAX_TIMEOUT_S: env.int(
    10,
    3600,
    60,
    'Seconds a payment authorization stays valid (maxTimeoutSeconds of every 402); an authorization valid for longer (beyond 30 s of clock skew) is refused.',
  ),
  X402_FACILITATOR_TIMEOUT_MS: env.int(100, 120_000, 10_000, 'Timeout of each facilitator verify and /supported call (ms); a facilitator that does not answer them is a 503 (nothing was taken).'),
  X402_SETTLE_TIMEOUT_MS: env.int(
    1000,
    3_600_000,
    60_000,
    "How long a settle sent to the facilitator is listened to (ms), never past the payment's authorization (validBefore); after that the chain says whether the transfer landed. A settle is never answered 'try again later'.",
  ),
  X402_RPC_URL: env.optionalUrl(
    "JSON-RPC endpoint of X402_NETWORK, where the server reads a payment's EIP-3009 authorizationState when the facilitator did not tell the outcome (default: RPC_URL_BASE on base, https://sepolia.base.org on base-sepolia; other networks: none, and such outcomes stay 'unknown' for npm run payments -- resolve).",
    'https://mainnet.base.org',
  ),
  X402_RECONCILE_INTERVAL_S: env.int(
    1,
    86_400,
    60,
    "Seconds between the server's passes over ledger rows left 'verified' or 'unknown' (a crash, a restart, an unreachable facilitator), settled or closed from what the chain says; also run at start-up.",
  ),
  X402_FACILITATOR: env.custom(
    z.string().refine((v) => v === 'coinbase-cdp' || /^https?:\/\/\S+$/.test(v), 'coinbase-cdp or the http(s) URL of an x402 facilitator'),
    'coinbase-cdp',
    'coinbase-cdp (needs CDP_API_KEY_ID/CDP_API_KEY_SECRET) or the URL of any x402 facilitator.',
  ),
  X402_PREFETCH: env.bool(
    true,
    "Start a paid route's upstream work while the facilitator verifies the payment (its answer is held, never sent, until the payment is verified); false: only after.",
  ),
  X402_EXACT_VERIFY: env.oneOf(
    ['local', 'facilitator'],
    'local',
    "How an exact payment on X402_NETWORK is verified before its route runs. local: an EIP-3009 authorization this ledger has never seen, matching the route's terms, within its validity window and signed by its payer (checked here, no network call) skips the facilitator's /verify: its /settle checks everything again before it moves money, and refuses (402, nothing charged, the answer not sent) what /verify would have; anything else (a smart-contract wallet's signature, Permit2, a retry of an authorization already seen) is verified by the facilitator. facilitator: every exact payment is verified by the facilitator's /verify first.",
  ),
  X402_BATCH_SETTLEMENT: env.oneOf(
    ['auto', 'true', 'false', 'drain'],
    'auto',
    "x402 batch-settlement beside exact (one deposit, then a signed voucher per call, claimed and settled in batches). auto: offered when the facilitator's /supported lists it for X402_NETWORK with a receiver authorizer (its own, or X402_BATCH_AUTHORIZER_KEY); true: required (start-up fails when the facilitator does not offer it); false: never; drain: no new channels or vouchers, the open channels' vouchers still claimed and settled until none is left unclaimed (then logged, and shown in /v1/status), after which false is safe.",
  ),
  X402_BATCH_DEPOSIT: env.custom(
    z.string().regex(/^\$\d+(\.\d+)?$/, 'a dollar amount such as $0.10'),
    '$0.10',
    'Deposit a batch-settlement channel is asked to hold when it opens or runs dry (at least X402_PRICE; clients may cap it lower).',
  ),
  X402_BATCH_WITHDRAW_DELAY_S: env.int(900, 2_592_000, 900, "Seconds a payer's timed withdrawal of unclaimed deposit waits before it can complete (15 min to 30 days)."),
  X402_BATCH_CLAIM_INTERVAL_S: env.int(
    1,
    864_000,
    300,
    'Seconds between claim-and-settle runs; at most a third of X402_BATCH_WITHDRAW_DELAY_S, so vouchers are claimed before a withdrawal can complete.',
  ),
  X402_BATCH_AUTHORIZER_KEY: env.custom(
    z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a private key, 0x + 64 hex'),
    undefined,
    "Private key of this server's batch-settlement receiver authorizer (signs claims and refunds; holds no funds). Unset: the facilitator's advertised receiverAuthorizer signs them.",
    { secret: true },
  ),
  X402_SIGNING_KEY: env.custom(
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'a secp256k1 private key, 0x + 64 hex digits')
      .refine(isSecp256k1Key, 'a secp256k1 private key, 0x + 64 hex digits, not zero and below the curve order'),
    undefined,
    "Private key (secp256k1, 0x + 64 hex) this server signs x402 offers and receipts with (the offer-receipt extension, JWS ES256K): every 402 then carries signed offers, every paid 200 a signed receipt and Content-Digest. Its public key is published in the agent card and /openapi.json. Unset: nothing is signed.",
    { secret: true },
  ),
  ...SVM_PAYMENTS_ENV,
  X402_FACILITATOR_FEE_USD: env.custom(
    z.string().regex(/^\d+(\.\d{1,18})?$/, 'a dollar amount such as 0.001'),
    '0.001',
    "What the facilitator charges per settlement (an on-chain transaction it submits: an exact payment, a batch deposit, claim, settlement or refund), in dollars, past X402_FACILITATOR_FREE_PER_MONTH; shown by npm run payments -- summary and /metrics. Default: Coinbase CDP's published price; 0 for a facilitator that charges nothing.",
  ),
  X402_FACILITATOR_FREE_PER_MONTH: env.int(0, 100_000_000, 1000, "Settlements a calendar month (UTC) the facilitator does not charge for (Coinbase CDP: the first 1,000)."),
  CDP_API_KEY_ID: env.secret('Coinbase Developer Platform API key id, for the coinbase-cdp facilitator.'),
  CDP_API_KEY_SECRET: env.secret('Coinbase Developer Platform API key secret, for the coinbase-cdp facilitator.'),
};

export type PaymentValues = EnvValues<typeof PAYMENTS_ENV>;

/** x402 as configured. */
export interface PaymentSettings {
  /** Enabled and a payee set: paid routes take x402 payments. */
  active: boolean;
  enabled: boolean;
  /** CAIP-2 network id, e.g. eip155:8453. */
  network: `eip155:${number}`;
  price: string;
  payTo: `0x${string}` | undefined;
  /** The token paid in, with what its EIP-712 domain and atomic units need. */
  asset: { address: `0x${string}`; decimals: number; name: string; version: string } | undefined;
  maxTimeoutS: number;
  /** Verify and /supported calls. */
  facilitatorTimeoutMs: number;
  /** How long a settle is listened to (within its authorization's validBefore). */
  settleTimeoutMs: number;
  /** JSON-RPC of the payment network, where unknown outcomes are read (authorizationState); undefined: not read. */
  rpcUrl: string | undefined;
  /** Seconds between passes of the ledger's reconciliation from the chain. */
  reconcileIntervalS: number;
  facilitator: 'coinbase-cdp' | string;
  /** Start the route's work while the facilitator verifies (the answer held until the grant). */
  prefetch: boolean;
  /** X402_EXACT_VERIFY: a first-seen EOA-signed exact payment checked here instead of the facilitator's /verify (local), or always the facilitator. */
  exactVerify: 'local' | 'facilitator';
  cdp: { keyId: string | undefined; keySecret: string | undefined };
  /** What settling costs at the facilitator: per settlement past the free ones of each month (settling-costs.ts). */
  fees: SettlingFees;
  /** X402_SIGNING_KEY: signs offers and receipts (signing-key.ts, offer-receipt.ts); undefined: nothing is signed. */
  signingKey: `0x${string}` | undefined;
  /** Payments from Solana (`exact`, SPL token) beside Base's, when X402_SVM_PAY_TO is set (svm-settings.ts). */
  svm: SvmPaymentSettings | undefined;
  /** batch-settlement beside exact (see src/payments/schemes/batch-settlement/batch-settlement.ts). */
  batch: {
    /** Installed (its channels claimed and settled): every mode but false. */
    enabled: boolean;
    /** X402_BATCH_SETTLEMENT: auto (offered when the facilitator lists it), true (required), false, drain (no new channels; claimed until none owes). */
    mode: 'auto' | 'true' | 'false' | 'drain';
    /** Dollar amount a channel is asked to hold, e.g. "$0.10". */
    deposit: string;
    withdrawDelayS: number;
    claimIntervalS: number;
    /** This server's receiver-authorizer key; unset = delegate to the facilitator's. */
    authorizerKey: `0x${string}` | undefined;
  };
}

/**
 * The typed settings from the parsed variables. `baseRpcUrl`: the JSON-RPC the chain routes use for Base
 * (RPC_URL_BASE), X402_RPC_URL's default on base. Throws a ConfigError naming what does not fit together.
 */
export function paymentSettings(e: PaymentValues, baseRpcUrl: string): PaymentSettings {
  const x402Active = e.X402_ENABLED && e.X402_PAY_TO !== undefined;
  if (x402Active && !X402_NETWORKS[e.X402_NETWORK] && !e.X402_ASSET) {
    throw new ConfigError(`invalid configuration:\n  X402_ASSET is required when X402_NETWORK=${e.X402_NETWORK} (no default USDC for that network)`);
  }
  const knownUsdc = X402_NETWORKS[e.X402_NETWORK]?.usdc.toLowerCase();
  if (x402Active && e.X402_ASSET && e.X402_ASSET.toLowerCase() !== knownUsdc && !e.X402_ASSET_NAME) {
    throw new ConfigError("invalid configuration:\n  X402_ASSET_NAME is required with a custom X402_ASSET (the token's EIP-712 domain name)");
  }
  if (x402Active && e.X402_FACILITATOR === 'coinbase-cdp' && !(e.CDP_API_KEY_ID && e.CDP_API_KEY_SECRET)) {
    throw new ConfigError(
      'invalid configuration:\n  X402_FACILITATOR=coinbase-cdp needs CDP_API_KEY_ID and CDP_API_KEY_SECRET (or set X402_FACILITATOR to a facilitator URL)',
    );
  }
  if (x402Active && e.X402_BATCH_SETTLEMENT !== 'false') checkBatchSettlement(e);
  const network = X402_NETWORKS[e.X402_NETWORK]?.caip2 ?? (e.X402_NETWORK as `eip155:${number}`);
  return {
    active: x402Active,
    enabled: e.X402_ENABLED,
    network,
    price: e.X402_PRICE,
    payTo: e.X402_PAY_TO as `0x${string}` | undefined,
    asset: resolveAsset(e),
    maxTimeoutS: e.X402_MAX_TIMEOUT_S,
    facilitatorTimeoutMs: e.X402_FACILITATOR_TIMEOUT_MS,
    settleTimeoutMs: e.X402_SETTLE_TIMEOUT_MS,
    rpcUrl: e.X402_RPC_URL ?? defaultPaymentRpc(network, baseRpcUrl),
    reconcileIntervalS: e.X402_RECONCILE_INTERVAL_S,
    facilitator: e.X402_FACILITATOR,
    prefetch: e.X402_PREFETCH,
    exactVerify: e.X402_EXACT_VERIFY,
    cdp: { keyId: e.CDP_API_KEY_ID, keySecret: e.CDP_API_KEY_SECRET },
    signingKey: e.X402_SIGNING_KEY as `0x${string}` | undefined,
    svm: svmPaymentSettings(e),
    fees: { feeUsd: e.X402_FACILITATOR_FEE_USD, freePerMonth: e.X402_FACILITATOR_FREE_PER_MONTH },
    batch: {
      enabled: e.X402_BATCH_SETTLEMENT !== 'false',
      mode: e.X402_BATCH_SETTLEMENT,
      deposit: e.X402_BATCH_DEPOSIT,
      withdrawDelayS: e.X402_BATCH_WITHDRAW_DELAY_S,
      claimIntervalS: e.X402_BATCH_CLAIM_INTERVAL_S,
      authorizerKey: e.X402_BATCH_AUTHORIZER_KEY as `0x${string}` | undefined,
    },
  };
}

/**
 * A voucher is only money once claimed, and a payer's timed withdrawal completes after the withdraw delay:
 * claim runs at most a third of that delay apart meet any withdrawal at least twice before it completes.
 */
function checkBatchSettlement(e: PaymentValues): void {
  if (e.X402_BATCH_CLAIM_INTERVAL_S * 3 > e.X402_BATCH_WITHDRAW_DELAY_S) {
    throw new ConfigError(
      `invalid configuration:\n  X402_BATCH_CLAIM_INTERVAL_S=${e.X402_BATCH_CLAIM_INTERVAL_S} must be at most a third of X402_BATCH_WITHDRAW_DELAY_S=${e.X402_BATCH_WITHDRAW_DELAY_S} (vouchers must be claimed before a payer's withdrawal can complete)`,
    );
  }
  const decimals = resolveAsset(e)?.decimals ?? 6;
  let deposit: bigint;
  let price: bigint;
  try {
    deposit = BigInt(atomicAmount(e.X402_BATCH_DEPOSIT, decimals));
    price = BigInt(atomicAmount(e.X402_PRICE, decimals));
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  X402_BATCH_DEPOSIT=${e.X402_BATCH_DEPOSIT}: ${(err as Error).message}`);
  }
  if (deposit < price) {
    throw new ConfigError(`invalid configuration:\n  X402_BATCH_DEPOSIT=${e.X402_BATCH_DEPOSIT} must be at least X402_PRICE=${e.X402_PRICE}`);
  }
}

/** secp256k1's group order: a private key is a number from 1 to SECP256K1_ORDER - 1. */
const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** Whether 0x + 64 hex is a usable key (anything else is the regex's to name). */
function isSecp256k1Key(hex: string): boolean {
  if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) return true;
  const d = BigInt(hex);
  return d > 0n && d < SECP256K1_ORDER;
}

/** The RPC the chain routes use for Base (RPC_URL_BASE); Base Sepolia's public RPC; none for other networks. */
function defaultPaymentRpc(network: string, baseRpcUrl: string): string | undefined {
  if (network === X402_NETWORKS.base!.caip2) return baseRpcUrl;
  if (network === X402_NETWORKS['base-sepolia']!.caip2) return 'https://sepolia.base.org';
  return undefined;
}

/** X402_ASSET when set; else the USDC of a known network (USDC: 6 decimals, EIP-712 version 2). */
function resolveAsset(e: PaymentValues): PaymentSettings['asset'] {
  const known = X402_NETWORKS[e.X402_NETWORK];
  if (e.X402_ASSET) {
    const isKnownUsdc = known && e.X402_ASSET.toLowerCase() === known.usdc.toLowerCase();
    return {
      address: e.X402_ASSET as `0x${string}`,
      decimals: e.X402_ASSET_DECIMALS,
      // Checked at load: a token other than a known USDC must name its EIP-712 domain.
      name: e.X402_ASSET_NAME ?? (isKnownUsdc ? known.usdcName : ''),
      version: e.X402_ASSET_VERSION,
    };
  }
  return known ? { address: known.usdc, decimals: 6, name: known.usdcName, version: '2' } : undefined;
}
