// The one-time authorization inside an `exact` Solana payment: a transaction (compute budget, an SPL
// TransferChecked of the price to pay_to's token account, a memo with a random nonce) signed by the payer and
// left for the facilitator to sign as fee payer. What makes it unique is the payer's signature; it can land only
// while its blockhash is valid (about 150 slots), so whether it landed can always be asked of the chain
// (outcome.ts): the payer's recent transactions, and the blockhash's validity.
import type { PaymentPayload } from '@x402/core/types';
import { getBase58Decoder, getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';
import type { PaymentAuthorization } from '../../core/authorization.ts';

const TOKEN_PROGRAMS = new Set(['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb']);

/** A Solana payment's authorization: the payer's signature, and the blockhash it was signed against. */
export interface SvmAuthorization {
  /** The token transfer's authority (base58). */
  payer: string;
  /** The payer's signature of the transaction (base58). */
  signature: string;
  /** The transaction's recent blockhash (base58): past it, it can never land. */
  blockhash: string;
}

/** The authorization of an `exact` SVM payload, when it carries a well-formed transaction signed by its payer. */
export function svmAuthorizationOf(payload: Pick<PaymentPayload, 'payload'> | { payload?: unknown }): SvmAuthorization | undefined {
  const wire = (payload.payload as { transaction?: unknown } | null | undefined)?.transaction;
  if (typeof wire !== 'string' || wire.length > 4096) return undefined;
  try {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    const keys = message.staticAccounts.map(String);
    const instructions = (message as { instructions?: { programAddressIndex: number; accountIndices?: number[] }[] }).instructions ?? [];
    for (const ix of instructions) {
      if (!TOKEN_PROGRAMS.has(keys[ix.programAddressIndex] ?? '')) continue;
      const payer = keys[ix.accountIndices?.[3] ?? -1];
      const signature = payer ? tx.signatures[payer as keyof typeof tx.signatures] : undefined;
      if (payer && signature) return { payer, signature: getBase58Decoder().decode(signature), blockhash: message.lifetimeToken };
    }
  } catch {
    // not a transaction
  }
  return undefined;
}

/** The nonce it is claimed and recorded under: `<payer signature>:<blockhash>` (outcome.ts reads both back). */
export const svmNonce = (a: SvmAuthorization) => `${a.signature}:${a.blockhash}`;

/** The signature and blockhash of a recorded nonce. */
export function fromSvmNonce(nonce: string): { signature: string; blockhash: string } | undefined {
  const [signature, blockhash] = nonce.split(':');
  return signature && blockhash ? { signature, blockhash } : undefined;
}

/** The core's view: valid until `maxTimeoutS` after it is first seen (its blockhash lives ~60 s; the chain says exactly). */
export function toPaymentAuthorization(a: SvmAuthorization, network: string, maxTimeoutS: number, nowMs = Date.now()): PaymentAuthorization {
  return { network, payer: a.payer, nonce: svmNonce(a), validBefore: Math.floor(nowMs / 1000) + maxTimeoutS };
}
