// A local Solana runtime for the x402 `exact` SVM tests: LiteSVM (the Solana runtime in-process, from the
// registry) behind a small JSON-RPC server on 127.0.0.1 that answers the calls @x402/svm's client and facilitator
// make, and the ones the server's outcome reader makes: getLatestBlockhash, getAccountInfo, simulateTransaction,
// sendTransaction, getSignatureStatuses, getSignaturesForAddress, getTransaction, isBlockhashValid. It holds a
// USDC-like SPL mint (6 decimals) and token accounts made as the SPL Token program lays them out, so the transfers
// the official client signs run through the real SPL Token program.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  address,
  getAddressEncoder,
  getBase58Decoder,
  getBase58Encoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  lamports,
  type Address,
  type Signature,
} from '@solana/kit';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';

export const TOKEN_PROGRAM = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
const ATA_PROGRAM = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');
const b58 = getBase58Decoder();
const b64 = getBase64Encoder();

/** The associated token account of `owner` for `mint`. */
export async function ataOf(owner: Address, mint: Address): Promise<Address> {
  const enc = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({ programAddress: ATA_PROGRAM, seeds: [enc.encode(owner), enc.encode(TOKEN_PROGRAM), enc.encode(mint)] });
  return pda;
}

interface Landed {
  signature: string;
  slot: number;
  err: unknown;
  wire: string;
  accounts: string[];
  blockTime: number;
}

/** What the ledger answers, and how a test steers it. */
export interface SolanaLedger {
  rpcUrl: string;
  mint: Address;
  /** Makes a token account of `owner` holding `amount` atomic units (and a SOL balance when asked). */
  fund(owner: Address, amount: bigint): Promise<void>;
  /** Gives `owner` lamports (a fee payer). */
  airdrop(owner: Address, sol: bigint): void;
  /** The token balance of `owner`'s associated account (0 when none). */
  balance(owner: Address): Promise<bigint>;
  /** Every transaction sent, in order. */
  readonly sent: Landed[];
  /** Calls by method. */
  readonly calls: Record<string, number>;
  /** Retires the current blockhash: transactions signed with it can no longer land. */
  expireBlockhash(): void;
  close(): Promise<void>;
}

const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
};

export async function startSolanaLedger(): Promise<SolanaLedger> {
  const svm = new LiteSVM().withTransactionHistory(10_000n);
  const mintKey = b58.decode(crypto.getRandomValues(new Uint8Array(32)));
  const mint = address(mintKey);
  const enc = getAddressEncoder();
  // SPL Mint: mint authority (none), supply, decimals 6, initialized, no freeze authority.
  const mintData = Buffer.concat([Buffer.alloc(36), u64(1_000_000_000_000n), Buffer.from([6, 1]), Buffer.alloc(36)]);
  const rent = (len: number) => svm.minimumBalanceForRentExemption(BigInt(len));
  svm.setAccount({ address: mint, data: mintData, executable: false, lamports: lamports(rent(82)), programAddress: TOKEN_PROGRAM, space: 82n });
  const expired = new Set<string>();
  const sent: Landed[] = [];
  const calls: Record<string, number> = {};
  let slot = 1;

  const tokenAccount = (owner: Address, amount: bigint) =>
    Buffer.concat([Buffer.from(enc.encode(mint)), Buffer.from(enc.encode(owner)), u64(amount), Buffer.alloc(36), Buffer.from([1]), Buffer.alloc(12), u64(0n), Buffer.alloc(36)]);

  const decodeTx = (wire: string) => getTransactionDecoder().decode(b64.encode(wire));
  const accountInfo = (addr: string) => {
    const a = svm.getAccount(address(addr));
    if (!a.exists) return null;
    return { data: [Buffer.from(a.data).toString('base64'), 'base64'], executable: a.executable, lamports: Number(a.lamports), owner: a.programAddress, rentEpoch: 0, space: a.data.length };
  };
  const context = () => ({ slot, apiVersion: '2.0.0' });

  const methods: Record<string, (params: any[]) => unknown> = {
    getLatestBlockhash: () => ({ context: context(), value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot + 150 } }),
    isBlockhashValid: ([hash]) => ({ context: context(), value: !expired.has(hash) && hash === svm.latestBlockhash() }),
    getAccountInfo: ([addr]) => ({ context: context(), value: accountInfo(addr) }),
    getBalance: ([addr]) => ({ context: context(), value: Number(svm.getBalance(address(addr)) ?? 0n) }),
    getSlot: () => slot,
    simulateTransaction: ([wire]) => {
      // The facilitator simulates before it signs as fee payer: signatures are not checked (sigVerify: false).
      svm.withSigverify(false);
      try {
        const r = svm.simulateTransaction(decodeTx(wire));
        const err = r instanceof FailedTransactionMetadata ? String(r.err()) : null;
        const meta = r instanceof FailedTransactionMetadata ? r.meta() : r.meta();
        return { context: context(), value: { err: err && { InstructionError: [0, err] }, logs: meta.logs(), accounts: null, unitsConsumed: Number(meta.computeUnitsConsumed()), returnData: null } };
      } finally {
        svm.withSigverify(true);
      }
    },
    sendTransaction: ([wire]) => {
      const tx = decodeTx(wire);
      const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
      const signature = b58.decode(Object.values(tx.signatures)[0]!);
      if (expired.has(message.lifetimeToken)) throw rpcError(-32002, 'Transaction simulation failed: Blockhash not found');
      const r = svm.sendTransaction(tx);
      if (r instanceof FailedTransactionMetadata && /AlreadyProcessed/.test(String(r.err()))) throw rpcError(-32002, 'Transaction simulation failed: This transaction has already been processed');
      if (r instanceof FailedTransactionMetadata && /BlockhashNotFound/.test(String(r.err()))) throw rpcError(-32002, 'Transaction simulation failed: Blockhash not found');
      slot++;
      sent.push({ signature, slot, err: r instanceof FailedTransactionMetadata ? String(r.err()) : null, wire, accounts: message.staticAccounts.map(String), blockTime: Math.floor(Date.now() / 1000) });
      return signature;
    },
    getSignatureStatuses: ([sigs]) => ({
      context: context(),
      value: (sigs as string[]).map((s) => {
        const t = sent.find((x) => x.signature === s);
        return t ? { slot: t.slot, confirmations: null, err: t.err && { InstructionError: [0, t.err] }, status: t.err ? { Err: t.err } : { Ok: null }, confirmationStatus: 'finalized' } : null;
      }),
    }),
    getSignaturesForAddress: ([addr, opts]) =>
      sent
        .filter((t) => t.accounts.includes(addr))
        .reverse()
        .slice(0, opts?.limit ?? 1000)
        .map((t) => ({ signature: t.signature, slot: t.slot, err: t.err && { InstructionError: [0, t.err] }, memo: null, blockTime: t.blockTime, confirmationStatus: 'finalized' })),
    getTransaction: ([sig]) => {
      const t = sent.find((x) => x.signature === sig);
      return t ? { slot: t.slot, blockTime: t.blockTime, transaction: [t.wire, 'base64'], meta: { err: t.err && { InstructionError: [0, t.err] }, fee: 5000 }, version: 0 } : null;
    },
  };

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const answer = (one: { id: unknown; method: string; params?: unknown[] }) => {
      calls[one.method] = (calls[one.method] ?? 0) + 1;
      const fn = methods[one.method];
      if (!fn) return { jsonrpc: '2.0', id: one.id, error: { code: -32601, message: `method not found: ${one.method}` } };
      try {
        return { jsonrpc: '2.0', id: one.id, result: fn(one.params ?? []) };
      } catch (err) {
        const e = err as { code?: number; message: string };
        return { jsonrpc: '2.0', id: one.id, error: { code: e.code ?? -32603, message: e.message } };
      }
    };
    const out = Array.isArray(body) ? body.map(answer) : answer(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(out, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    rpcUrl,
    mint,
    sent,
    calls,
    async fund(owner, amount) {
      const ata = await ataOf(owner, mint);
      svm.setAccount({ address: ata, data: tokenAccount(owner, amount), executable: false, lamports: lamports(rent(165)), programAddress: TOKEN_PROGRAM, space: 165n });
    },
    airdrop(owner, sol) {
      svm.airdrop(owner, lamports(sol * 1_000_000_000n));
    },
    async balance(owner) {
      const a = svm.getAccount(await ataOf(owner, mint));
      return a.exists ? Buffer.from(a.data).readBigUInt64LE(64) : 0n;
    },
    expireBlockhash() {
      expired.add(svm.latestBlockhash());
      svm.expireBlockhash();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function rpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

export const signatureOf = (wire: string): Signature => getBase58Decoder().decode(Object.values(getTransactionDecoder().decode(getBase64Encoder().encode(wire)).signatures)[0]!) as Signature;
void getBase58Encoder;
