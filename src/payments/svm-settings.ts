// The settings of x402 payments from Solana (`exact` with an SPL token, @x402/svm), declared beside the
// module that reads them; settings.ts adds them to X402_* and hands the parsed result on as PaymentSettings.svm.
import { z } from 'zod';
import { env, type EnvValues } from '../lib/env.ts';
import { isSolanaAddress } from '../lib/base58.ts';
import { svmNetwork } from './networks.ts';

const solanaAddress = (what: string) => z.string().refine(isSolanaAddress, `${what} (base58, 32 bytes)`);

export const SVM_PAYMENTS_ENV = {
  X402_SVM_PAY_TO: env.custom(
    solanaAddress('a Solana address'),
    undefined,
    "Solana address that receives payments in X402_SVM_ASSET; when set (with X402_PAY_TO), every 402 offers `exact` on X402_SVM_NETWORK beside Base's, if the facilitator's /supported lists it with a fee payer.",
    { example: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' },
  ),
  X402_SVM_NETWORK: env.custom(
    z.string().refine((v) => svmNetwork(v) !== undefined, 'mainnet, devnet, or the CAIP-2 id of one of them (solana:<genesis>)'),
    'mainnet',
    'mainnet (solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp), devnet (solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1), or one of those CAIP-2 ids.',
  ),
  X402_SVM_ASSET: env.custom(solanaAddress('an SPL token mint'), undefined, "SPL token mint paid in on Solana (default: USDC's mint on X402_SVM_NETWORK; 6 decimals, as X402_ASSET_DECIMALS says for a custom one)."),
  X402_SVM_RPC_URL: env.optionalUrl(
    "Solana JSON-RPC of X402_SVM_NETWORK, where the server reads a Solana payment's transaction when the facilitator did not tell the outcome (signature status, blockhash validity). Unset: such outcomes stay 'unknown' for npm run payments -- resolve.",
    'https://api.mainnet-beta.solana.com',
  ),
};

export type SvmPaymentValues = EnvValues<typeof SVM_PAYMENTS_ENV>;

/** Solana payments as configured; undefined while X402_SVM_PAY_TO is unset. */
export interface SvmPaymentSettings {
  /** CAIP-2 id, solana:<genesis>. */
  network: `solana:${string}`;
  payTo: string;
  /** The SPL token mint. */
  asset: { address: string; decimals: number };
  rpcUrl: string | undefined;
}

export function svmPaymentSettings(e: SvmPaymentValues & { X402_ASSET_DECIMALS: number }): SvmPaymentSettings | undefined {
  if (!e.X402_SVM_PAY_TO) return undefined;
  const network = svmNetwork(e.X402_SVM_NETWORK)!;
  const custom = e.X402_SVM_ASSET !== undefined && e.X402_SVM_ASSET !== network.usdc;
  return {
    network: network.caip2,
    payTo: e.X402_SVM_PAY_TO,
    asset: { address: e.X402_SVM_ASSET ?? network.usdc, decimals: custom ? e.X402_ASSET_DECIMALS : 6 },
    rpcUrl: e.X402_SVM_RPC_URL,
  };
}
