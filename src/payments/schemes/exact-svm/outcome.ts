// What a Solana chain says about one `exact` payment's transaction, read over X402_SVM_RPC_URL: the payer's
// recent transactions (getSignaturesForAddress), the one its signature is in (getTransaction), that
// transaction's signature status (getSignatureStatuses), and whether its blockhash can still land anything
// (isBlockhashValid). The blockhash is asked first: once it is invalid, a transaction not found never lands.
//
//   found, its status confirmed without error          → landed (its signature is the transaction)
//   found, failed on chain                              → not_landed (the transfer did not happen; it cannot be resent)
//   not found, blockhash no longer valid                → not_landed
//   not found, blockhash still valid                    → pending
import { getBase58Decoder, getBase64Encoder, getTransactionDecoder } from '@solana/kit';
import { CLOCK_SKEW_S } from '../../core/authorization.ts';
import { watchUntilFinal, type AuthorizationRef, type ChainVerdict, type OutcomeReader } from '../../core/outcome.ts';
import { fromSvmNonce } from './authorization.ts';

export interface SvmOutcomeOptions {
  rpcUrl: string;
  /** Bound of each RPC call (ms). */
  timeoutMs: number;
  pollMs?: number;
  /** How many of the payer's latest transactions are looked through. */
  depth?: number;
}

const message = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0]!;

export class SvmOutcomeReader implements OutcomeReader {
  private id = 0;
  constructor(private readonly options: SvmOutcomeOptions) {}

  async check(a: AuthorizationRef): Promise<ChainVerdict> {
    const parts = fromSvmNonce(a.nonce);
    if (!parts) return { kind: 'unreachable', state: `not a Solana payment's nonce: ${a.nonce}` };
    try {
      const valid = (await this.call<{ value: boolean }>('isBlockhashValid', [parts.blockhash, { commitment: 'confirmed' }])).value;
      const found = await this.transactionOf(a, parts.signature);
      const said = `payer ${a.payer}, signature ${parts.signature}, blockhash ${parts.blockhash} ${valid ? 'still valid' : 'no longer valid'}`;
      if (found) {
        const [status] = (await this.call<{ value: ({ err: unknown; confirmationStatus: string | null } | null)[] }>('getSignatureStatuses', [[found], { searchTransactionHistory: true }])).value;
        if (status && status.err == null && (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized')) {
          return { kind: 'landed', txHash: found, state: `${said}: transaction ${found} ${status.confirmationStatus}` };
        }
        if (status?.err != null) return { kind: 'not_landed', state: `${said}: transaction ${found} failed on chain: ${JSON.stringify(status.err)}` };
        return { kind: 'pending', state: `${said}: transaction ${found} not yet confirmed` };
      }
      return valid ? { kind: 'pending', state: `${said}: not found yet` } : { kind: 'not_landed', state: `${said}: not found, and it can never land` };
    } catch (err) {
      return { kind: 'unreachable', state: `the chain could not be asked (X402_SVM_RPC_URL): ${message(err)}` };
    }
  }

  watch(a: AuthorizationRef, untilMs: number, signal?: AbortSignal): Promise<ChainVerdict> {
    return watchUntilFinal(() => this.check(a), untilMs, this.options.pollMs ?? 500, signal);
  }

  /** The signature of the payer's transaction that carries `payerSignature`, among its latest ones. */
  private async transactionOf(a: AuthorizationRef, payerSignature: string): Promise<string | undefined> {
    const list = await this.call<{ signature: string; blockTime: number | null }[]>('getSignaturesForAddress', [a.payer, { limit: this.options.depth ?? 100, commitment: 'confirmed' }]);
    const since = a.since / 1000 - CLOCK_SKEW_S - 120;
    for (const entry of list) {
      if (entry.blockTime != null && entry.blockTime < since) break;
      if (entry.signature === payerSignature) return entry.signature;
      const tx = await this.call<{ transaction: [string, string] } | null>('getTransaction', [entry.signature, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);
      if (!tx) continue;
      const sigs = Object.values(getTransactionDecoder().decode(getBase64Encoder().encode(tx.transaction[0])).signatures);
      if (sigs.some((s) => s && getBase58Decoder().decode(s) === payerSignature)) return entry.signature;
    }
    return undefined;
  }

  private async call<T>(method: string, params: unknown[]): Promise<T> {
    const res = await fetch(this.options.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params }),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    if (!res.ok) throw new Error(`${method}: HTTP ${res.status}`);
    const body = (await res.json()) as { result?: T; error?: { message?: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message ?? 'error'}`);
    return body.result as T;
  }
}
