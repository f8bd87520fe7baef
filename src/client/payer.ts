// Paying a 402 with the official x402 client packages: `exact` always, `batch-settlement` when the server offers
// it and the caller's `batch` setting allows (`'auto'`, the default: when maxSpendUsd leaves room for the deposit
// the server asks, or a channel already holds enough; `true`: whenever offered, the deposit cut to what
// maxSpendUsd leaves), on the networks and assets the client was configured for only. The client drives
// 402 → sign → send itself (not @x402/fetch), so that a payment is signed once per call and resent unchanged on
// a retry; this module only chooses what to pay, holds it against maxSpendUsd (asking the chain first to release
// expired authorizations when the limit is reached), signs it with a payment identifier, and lets the scheme read
// the answer (a batch-settlement channel's state lives in the scheme's storage).
import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { DEFAULT_ASSETS, findDefaultAsset, isBatchSettlementVoucherPayload, toClientEvmSigner } from '@x402/evm';
import { DEFAULT_ASSETS as SVM_DEFAULT_ASSETS, findDefaultAsset as findSvmDefaultAsset } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { InMemoryClientChannelStorage, signVoucher, type BatchSettlementDepositStrategyContext, type ClientChannelStorage } from '@x402/evm/batch-settlement/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { createPublicClient, http, type LocalAccount } from 'viem';
import type { AuthorizationChain } from './chain.ts';
import { MarketgateError, type SentPayment } from './errors.ts';
import { PresigningSigner } from './presign.ts';
import { RememberingBatchScheme } from './voucher-scheme.ts';
import type { SolanaWallet } from './solana-wallet.ts';
import { attoUsd, tokenUnits, usd, type Expiring, type Hold, type SpendLimit } from './spend.ts';

/** A token the client may pay in besides the networks' default USDC (a local or test token), taken as $1 a token. */
export interface PaymentAsset {
  /** CAIP-2 network, e.g. `eip155:84532`. */
  network: string;
  /** The token's contract address. */
  asset: string;
  decimals: number;
}

export interface BatchOptions {
  /**
   * `'auto'`: pay with batch-settlement when maxSpendUsd leaves room for the deposit the server asks (or a channel
   * already holds enough for the call), else `exact`; `true` (the default when options are given): whenever the
   * server offers it, the deposit cut to what maxSpendUsd leaves.
   */
  use?: 'auto' | true;
  /** An RPC endpoint of the payment network: lets the scheme read a channel's state on chain (recovery after a restart). */
  rpcUrl?: string;
  /** Where channel state is kept (default: in memory, for this process). */
  storage?: ClientChannelStorage;
  /**
   * Sign each channel's next voucher ahead, while the current call's request is on the wire, so that the next call
   * does not wait for its signature (default true). It is not sent, nor counted against maxSpendUsd, until used.
   */
  presign?: boolean;
}

export interface PayerOptions {
  /** The EVM wallet (Base); undefined: Solana only. */
  account?: LocalAccount;
  /** The Solana wallet; undefined: EVM only. */
  solana?: SolanaWallet;
  /** With both wallets and both offered: which family pays. */
  prefer: 'base' | 'solana';
  /** Per network, the RPC a Solana payment's transaction is built against (else the SDK's public default). */
  rpcUrls: Record<string, string>;
  spend: SpendLimit;
  assets: PaymentAsset[];
  /** The CAIP-2 networks it pays on: nothing else is signed. */
  networks: string[];
  /** Where expired authorizations are found unused (released) or used. */
  chain: AuthorizationChain;
  /** Undefined: exact only. */
  batch?: BatchOptions & { use: 'auto' | true };
  fetch: typeof fetch;
}

/** A payment signed for one call, ready to send (and to resend unchanged). */
export interface SignedPayment extends SentPayment {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  hold: Hold;
  decimals: number;
}

const BATCH = 'batch-settlement';
/** The Bazaar discovery extension's key (@x402/extensions/bazaar). */
const BAZAAR = 'bazaar';

/** The scheme's refusals of a channel state the payer holds wrong (@x402/evm batch-settlement's reasons). */
const BATCH_STATE_REFUSALS = /^invalid_batch_settlement_evm_cumulative_(below_claimed|amount_mismatch)$/;

/** `batch: 'auto'` declines a deposit maxSpendUsd has no room for: the call is paid `exact` instead. */
class DepositDeclined extends Error {}

export class Payer {
  private readonly client = new x402Client();
  private readonly http = new x402HTTPClient(this.client);
  private readonly batchScheme: RememberingBatchScheme | undefined;
  /** One batch-settlement payment at a time: the channel takes one call at a time, and its state moves with each. */
  private batchQueue: Promise<unknown> = Promise.resolve();
  /** Where `'auto'` declined a deposit (network, asset, payee): paid `exact` from then on (maxSpendUsd only shrinks). */
  private readonly declined = new Set<string>();
  /** Per channel (its terms): the requirements last paid and the route URL they were paid at, for close()'s refunds. */
  private readonly channels = new Map<string, { requirements: PaymentRequirements; url: string }>();
  private readonly channelStorage: ClientChannelStorage | undefined;
  /** Signs each channel's next voucher ahead (`batch.presign`, default on). */
  readonly presigner: PresigningSigner | undefined;

  constructor(private readonly opts: PayerOptions) {
    if (opts.account) this.client.register('eip155:*', new ExactEvmScheme(opts.account));
    if (opts.solana) {
      // One exact scheme per Solana network allowed, each built against that network's RPC when one is given.
      const networks = opts.networks.filter((n) => n.startsWith('solana:'));
      for (const network of networks) this.client.register(network as `${string}:${string}`, new ExactSvmScheme(opts.solana.signer, { rpcUrl: opts.rpcUrls[network] }));
      if (!networks.length) this.client.register('solana:*', new ExactSvmScheme(opts.solana.signer));
    }
    if (opts.batch && opts.account) {
      const reader = opts.batch.rpcUrl ? createPublicClient({ transport: http(opts.batch.rpcUrl) }) : undefined;
      this.channelStorage = opts.batch.storage ?? new InMemoryClientChannelStorage();
      const signer = toClientEvmSigner(opts.account, reader);
      this.presigner = opts.batch.presign === false ? undefined : new PresigningSigner((typedData) => signer.signTypedData(typedData));
      const presigner = this.presigner;
      this.batchScheme = new RememberingBatchScheme(presigner ? { ...signer, signTypedData: (typedData) => presigner.signTypedData(typedData) } : signer, this.channelStorage, {
        depositStrategy: (ctx) => this.depositWithinLimit(ctx),
      });
      this.client.register('eip155:*', this.batchScheme);
    }
    // The payer's own limit is maxSpendUsd (checked before signing); the SDK's per-payment cap only has to admit it.
    const cap = opts.spend.limit;
    this.client.setSpendControls({
      maxAmountPerPayment: `$${usd(cap)}`,
      allowedAssets: opts.assets.map((a) => ({ network: a.network as `${string}:${string}`, asset: a.asset, maxAmountPerPayment: String(tokenUnits(cap, a.decimals)) })),
    });
  }

  /** The EVM wallet's address, else the Solana wallet's. */
  get address(): string {
    return this.opts.account?.address ?? this.opts.solana!.address;
  }

  /** The address that pays on `network` (a receipt names it). */
  addressFor(network: string): string {
    return (network.startsWith('solana:') ? this.opts.solana?.address : this.opts.account?.address) ?? this.address;
  }

  /** Runs a paid exchange; batch-settlement ones one at a time. */
  serialize<T>(requirements: PaymentRequirements, run: () => Promise<T>): Promise<T> {
    if (requirements.scheme !== BATCH) return run();
    const next = this.batchQueue.then(run, run);
    this.batchQueue = next.catch(() => undefined);
    return next;
  }

  /**
   * What this client would pay from a 402's offers: batch-settlement first when opted in, else exact; only on its
   * networks, in their USDC or a listed asset. An offer elsewhere is refused (`not-allowed`), nothing signed.
   */
  choose(required: PaymentRequired, path: string): PaymentRequirements {
    const schemes = this.batchScheme ? [BATCH, 'exact'] : ['exact'];
    const evm = (a: PaymentRequirements) => this.opts.account !== undefined && a.network.startsWith('eip155:') && schemes.includes(a.scheme) && !(a.scheme === BATCH && this.declined.has(termsKey(a)));
    const svm = (a: PaymentRequirements) => this.opts.solana !== undefined && a.network.startsWith('solana:') && a.scheme === 'exact';
    const known = required.accepts.filter((a) => evm(a) || svm(a));
    const offered = required.accepts.map((a) => `${a.scheme} ${a.asset} on ${a.network}`).join(', ') || 'nothing';
    if (!known.length) throw new MarketgateError({ kind: 'payment', path, status: 402, error: `no offer this client can pay: ${offered} (it pays ${this.paysText(schemes)})` });
    const payable = known.filter((a) => this.opts.networks.includes(a.network) && this.decimalsOf(a) !== undefined);
    // The preferred wallet's offers first (`prefer`), then batch-settlement before exact.
    const family = (a: PaymentRequirements) => (a.network.startsWith('solana:') === (this.opts.prefer === 'solana') ? 0 : 1);
    payable.sort((a, b) => family(a) - family(b) || schemes.indexOf(a.scheme) - schemes.indexOf(b.scheme));
    const chosen = payable[0];
    if (!chosen) {
      throw new MarketgateError({
        kind: 'not-allowed',
        path,
        status: 402,
        error: `the 402 asks for ${offered}, and this client pays only ${this.allowedText()}: nothing was signed (the \`networks\` and \`assets\` options say what it may pay)`,
      });
    }
    return chosen;
  }

  /** `exact or batch-settlement on EVM networks, exact on Solana`: what its wallets pay. */
  private paysText(schemes: string[]): string {
    return [this.opts.account ? `${schemes.join(' or ')} on EVM networks` : '', this.opts.solana ? 'exact on Solana' : ''].filter(Boolean).join(', ');
  }

  /** `USDC on eip155:8453, 0x… on eip155:31337`: what the allow-list admits. */
  private allowedText(): string {
    return this.opts.networks
      .map((network) => {
        const tokens = [...(DEFAULT_ASSETS[network] ?? SVM_DEFAULT_ASSETS[network] ?? []).map((a) => a.symbol), ...this.opts.assets.filter((a) => a.network === network).map((a) => a.asset)];
        return `${tokens.join(' or ') || 'no known token'} on ${network}`;
      })
      .join(', ');
  }

  /**
   * Holds the price against maxSpendUsd, then signs it with a fresh payment identifier. Nothing is signed past the
   * limit. `carry`: the hold of a payment this one replaces (a voucher refused with the scheme's corrective 402),
   * which it takes over rather than holding the price again.
   */
  async sign(required: PaymentRequired, requirements: PaymentRequirements, path: string, carry?: Hold): Promise<SignedPayment> {
    const decimals = this.decimalsOf(requirements)!;
    const atto = attoUsd(BigInt(requirements.amount), decimals);
    const hold = carry?.state === 'held' && carry.atto >= atto ? carry : await this.holdWithin(atto, path);
    let payload: PaymentPayload;
    try {
      payload = await this.client.createPaymentPayload({ ...required, accepts: [requirements] });
    } catch (err) {
      if (err instanceof DepositDeclined || (err as { cause?: unknown })?.cause instanceof DepositDeclined) {
        // 'auto': no room for the deposit asked; this call and the next are paid exact (the hold moves with it).
        this.declined.add(termsKey(requirements));
        if (hold !== carry) this.opts.spend.unsigned(hold);
        return this.sign(required, this.choose(required, path), path, carry);
      }
      if (hold !== carry) this.opts.spend.unsigned(hold);
      if (err instanceof MarketgateError) throw err;
      throw new MarketgateError({ kind: 'payment', path, status: 402, error: `could not sign the payment: ${(err as Error)?.message ?? String(err)}`, cause: err });
    }
    // Signed: from now on it counts as spent, until the chain shows it unused after it expired.
    this.opts.spend.signed(hold, expiringOf(payload, requirements));
    // Never a reason for this payment to fail: without it, the next call signs its voucher itself.
    if (requirements.scheme === BATCH) await this.presignNext(payload, requirements).catch(() => undefined);
    const identifier = required.extensions?.[PAYMENT_IDENTIFIER] ? generatePaymentId() : undefined;
    if (identifier) payload.extensions = appendPaymentIdentifierToExtensions(withOwnIdentifierInfo(payload.extensions), identifier);
    // A voucher goes to no facilitator, so the Bazaar declaration the SDK echoes into every payload (the route's
    // input and output schemas: most of its 3-5 KB, for a facilitator to catalogue the route when it settles) is
    // left out of it: the header shrinks to about 1 KB, which every voucher call then writes, sends and the
    // server reads. An echo is optional; a server checks only the echoes it is sent.
    if (isBatchSettlementVoucherPayload(payload.payload) && payload.extensions?.[BAZAAR]) {
      const { [BAZAAR]: _bazaar, ...rest } = payload.extensions;
      payload.extensions = Object.keys(rest).length ? rest : undefined;
    }
    return {
      scheme: requirements.scheme,
      network: requirements.network,
      amount: requirements.amount,
      asset: requirements.asset,
      usd: usd(atto),
      identifier,
      signature: encodePayment(payload),
      payload,
      requirements,
      hold,
      decimals,
    };
  }

  /**
   * Signs ahead the voucher the channel's next call at this price will send (this voucher's cumulative amount plus
   * the price), in the background once this call's request is sent. Not when that voucher would pass the channel's
   * balance (the next call tops up instead) or what maxSpendUsd leaves: a voucher signed ahead is neither sent nor
   * counted until the next call holds its price and the scheme asks for that very signature.
   */
  private async presignNext(payload: PaymentPayload, requirements: PaymentRequirements): Promise<void> {
    const presigner = this.presigner;
    const sent = payload.payload as { voucher?: { channelId?: `0x${string}`; maxClaimableAmount?: string }; deposit?: { amount?: string } };
    const channelId = sent.voucher?.channelId;
    if (!presigner || !this.channelStorage || !channelId || !/^\d+$/.test(sent.voucher?.maxClaimableAmount ?? '')) return;
    const price = BigInt(requirements.amount);
    const next = BigInt(sent.voucher!.maxClaimableAmount!) + price;
    // The channel as stored before this call's answer (the payments of one channel are taken one at a time).
    const stored = await this.channelStorage.get(channelId.toLowerCase());
    const balance = BigInt(stored?.balance ?? '0') + BigInt(sent.deposit?.amount ?? '0');
    if (next > balance || attoUsd(price, this.decimalsOf(requirements)!) > this.opts.spend.remaining) return;
    await signVoucher({ address: this.opts.account!.address, signTypedData: (typedData) => (presigner.presign(channelId, typedData), Promise.resolve('0x')) }, channelId, String(next), requirements.network);
  }

  /** Asks the chain about every held authorization (used → spent, unused after expiry → released). */
  async reconcile(): Promise<void> {
    if (this.opts.chain.configured) await this.opts.spend.reconcile((all) => this.opts.chain.ask(all));
  }

  /** A hold of `atto`; when it does not fit and the chain may release expired authorizations, asked once first. */
  private async holdWithin(atto: bigint, path: string): Promise<Hold> {
    const spend = this.opts.spend;
    if (atto > spend.remaining && spend.releasable && this.opts.chain.configured) await this.reconcile();
    return spend.hold(atto, path);
  }

  /**
   * Lets the scheme read the answer to a paid request (a batch channel's new state, or the corrective 402
   * it recovers from); `recovered`: the scheme resynchronised and a new payment may be signed.
   */
  async read(signed: SignedPayment, status: number, headers: Headers): Promise<{ recovered: boolean; settle: SettleResponse | undefined }> {
    try {
      const { recovered, settleResponse } = await this.http.processPaymentResult(signed.payload, (name) => headers.get(name), status);
      return { recovered, settle: settleResponse };
    } catch {
      return { recovered: false, settle: undefined };
    }
  }

  /**
   * A batch-settlement payment refused for its channel's state, which the scheme could not resynchronise (it reads the
   * channel on chain only with an RPC: `batch.rpcUrl`): this call and the next to the same payee are paid `exact`. It
   * happens to a new process on a wallet whose channel an earlier one refunded (close()): the server has forgotten
   * the channel, the chain has not, and only the chain can say where its vouchers must start.
   */
  unrecoverableBatch(signed: SignedPayment, reason: string | undefined): boolean {
    if (signed.scheme !== BATCH || !reason || !BATCH_STATE_REFUSALS.test(reason)) return false;
    this.declined.add(termsKey(signed.requirements));
    return true;
  }

  /** A batch-settlement payment was taken at `url`: its channel is one close() refunds. */
  paidAt(signed: SignedPayment, url: string): void {
    if (signed.scheme === BATCH) this.channels.set(termsKey(signed.requirements), { requirements: signed.requirements, url });
  }

  /**
   * Asks for the unused deposit of every channel this client paid through and that still holds some (the
   * cooperative refund, signed by the server's receiver authorizer); one answer per channel, failures included.
   */
  async refundAll(): Promise<{ network: string; url: string; result?: SettleResponse; error?: string }[]> {
    if (!this.batchScheme || !this.channelStorage) return [];
    const out: { network: string; url: string; result?: SettleResponse; error?: string }[] = [];
    for (const { requirements, url } of this.channels.values()) {
      const id = this.batchScheme.channelId(this.batchScheme.buildChannelConfig(requirements), requirements.network).toLowerCase();
      const held = await this.channelStorage.get(id);
      if (!held || BigInt(held.balance ?? '0') <= BigInt(held.chargedCumulativeAmount ?? '0')) continue;
      try {
        out.push({ network: requirements.network, url, result: await this.serialize(requirements, () => this.batchScheme!.refund(url, { fetch: this.opts.fetch })) });
      } catch (err) {
        out.push({ network: requirements.network, url, error: (err as Error)?.message ?? String(err) });
      }
    }
    return out;
  }

  /** Returns the unused batch-settlement deposit of the channel paying `url` (a paid route) to this wallet. */
  async refund(url: string): Promise<SettleResponse> {
    if (!this.batchScheme) throw new MarketgateError({ kind: 'config', path: 'batch', error: 'refunds are for batch-settlement deposits: create the client with `batch`' });
    const batchScheme = this.batchScheme;
    return this.serialize({ scheme: BATCH } as PaymentRequirements, () => batchScheme.refund(url, { fetch: this.opts.fetch }));
  }

  /**
   * A deposit never exceeds what maxSpendUsd leaves (this call's price included): money locked in a channel is
   * bounded too. `'auto'` declines one it cannot make in full (the call is then paid `exact`).
   */
  private depositWithinLimit(ctx: BatchSettlementDepositStrategyContext): string {
    const decimals = this.decimalsOf(ctx.paymentRequirements)!;
    const room = tokenUnits(this.opts.spend.remaining + attoUsd(BigInt(ctx.requestAmount), decimals), decimals);
    const wanted = BigInt(ctx.depositAmount);
    if (wanted <= room) return ctx.depositAmount;
    if (this.opts.batch?.use === 'auto') throw new DepositDeclined(`a deposit of ${ctx.depositAmount} units would pass what maxSpendUsd leaves`);
    if (BigInt(ctx.minimumDepositAmount) > room) {
      const need = usd(attoUsd(BigInt(ctx.minimumDepositAmount), decimals));
      throw new MarketgateError({ kind: 'spend-limit', path: 'batch deposit', error: `a batch-settlement deposit of $${need} would pass what maxSpendUsd leaves` });
    }
    return String(room);
  }

  private decimalsOf(r: Pick<PaymentRequirements, 'asset' | 'network'>): number | undefined {
    // A Solana mint's base58 address is case-sensitive; an EVM address is not.
    const solana = r.network.startsWith('solana:');
    const listed = this.opts.assets.find((a) => a.network === r.network && (solana ? a.asset === r.asset : a.asset.toLowerCase() === r.asset.toLowerCase()));
    const known = solana ? findSvmDefaultAsset(r.asset, r.network as `${string}:${string}`) : findDefaultAsset(r.asset, r.network as `${string}:${string}`);
    return listed?.decimals ?? known?.decimals;
  }
}

/**
 * The PAYMENT-SIGNATURE header, as the SDK's encodePaymentSignatureHeader makes it (base64 of the JSON's UTF-8
 * bytes), made by Node's Buffer: the SDK's goes through a string a byte at a time, 0.3 ms for a 5 KB payload.
 */
export const encodePayment = (payload: PaymentPayload): string => Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');

/** One offer's terms, as 'auto' remembers a declined deposit: network, token, payee. */
const termsKey = (r: Pick<PaymentRequirements, 'network' | 'asset' | 'payTo'>) => `${r.network} ${r.asset.toLowerCase()} ${r.payTo.toLowerCase()}`;

/** An `exact` EIP-3009 payment's authorization, as the chain is asked about it; undefined for any other payment. */
function expiringOf(payload: PaymentPayload, requirements: PaymentRequirements): Expiring | undefined {
  const auth = (payload.payload as { authorization?: { from?: unknown; nonce?: unknown; validBefore?: unknown } }).authorization;
  if (requirements.scheme !== 'exact' || !auth || typeof auth.from !== 'string' || typeof auth.nonce !== 'string' || !/^\d+$/.test(String(auth.validBefore))) return undefined;
  return { network: requirements.network, asset: requirements.asset as `0x${string}`, payer: auth.from as `0x${string}`, nonce: auth.nonce as `0x${string}`, validBefore: BigInt(String(auth.validBefore)) };
}

/**
 * The payload's extensions with the payment identifier's `info` copied, where appendPaymentIdentifierToExtensions
 * writes the id: the 402's declaration, which the SDK echoes and kept terms reuse, is never changed. (A structured
 * clone of all of them did the same at 15 µs and some kilobytes of garbage a call.)
 */
export function withOwnIdentifierInfo(extensions: PaymentPayload['extensions']): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...extensions };
  const declared = copy[PAYMENT_IDENTIFIER] as { info?: unknown } | undefined;
  if (declared && typeof declared === 'object' && declared.info && typeof declared.info === 'object') copy[PAYMENT_IDENTIFIER] = { ...declared, info: { ...declared.info } };
  return copy;
}
