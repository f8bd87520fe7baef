// A repeat voucher checked in a fraction of a millisecond, in front of @x402/evm's own check.
//
// The SDK's before-verify hook checks each voucher with viem in JavaScript: the channel id computed from its
// config (an EIP-712 hash), the config against the route, and the payer authorizer's signature recovered with
// @noble/curves, about 2 ms of CPU a call on this project's machine (4 ms when it is busy), most of a repeat
// call's cost. This hook runs first and answers the common case itself: a voucher on a channel whose config the
// SDK already accepted for the same route (remembered here, by its exact bytes), carrying the next cumulative
// amount, within the balance, the channel's on-chain state fresh; its signature is recovered by libsecp256k1
// compiled to WebAssembly (src/lib/ecdsa-recover.ts) and must be the payer authorizer's. It records what the
// SDK's hook records for the call (the pending request's id, the channel's state as read) and answers as the
// SDK's local check answers, so the SDK's after-verify hook reserves and charges the channel exactly as before.
//
// It is stricter than the SDK, never looser: anything else (a first voucher, a deposit, a refund, a cumulative
// amount that is not the next one, stale on-chain state, a signature that is not 65 bytes with v 27 or 28 and a
// low s, as the channel contract's ECDSA recovery wants) goes to the SDK's hook unchanged, which then answers
// (the corrective 402, the facilitator's verify, a refusal). A config is remembered only after the SDK's hook
// accepted a voucher of it locally (kept in AcceptedChannels, which voucher-lane.ts reads too).
import { randomBytes } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, isBatchSettlementVoucherPayload } from '@x402/evm';
import type { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server';
import { getAddress, hashDomain, hexToBytes, keccak256, toHex, type Hex } from 'viem';
import { recoverSigner } from '../../../lib/ecdsa-recover.ts';
import { attemptOf } from '../../core/attempt.ts';

type Scheme = BatchSettlementEvmScheme;
type Hooks = NonNullable<Scheme['schemeHooks']>;
type BeforeVerify = NonNullable<Hooks['onBeforeVerify']>;
type BeforeVerifyContext = Parameters<BeforeVerify>[0];
type Channel = NonNullable<Awaited<ReturnType<ReturnType<Scheme['getStorage']>['get']>>>;
export type Voucher = { channelId: Hex; maxClaimableAmount: string; signature: Hex };
export type ChannelConfig = { payer: Hex; payerAuthorizer: Hex } & Record<string, unknown>;

const VOUCHER_TYPEHASH = keccak256(toHex('Voucher(bytes32 channelId,uint128 maxClaimableAmount)'), 'bytes');
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const domains = new Map<number, Uint8Array>();

/**
 * What the SDK's verify accepted, by channel: the config with the route's terms (the fast check admits the next
 * voucher of a channel whose key matches), and, per channel and route, the whole payload (the lane admits the next
 * payload equal to it but for what changes per call). Both are checks the SDK made: its own hook's, or this check's
 * as it runs inside the SDK's verify (after the requirements were matched and the extensions validated). Bounded:
 * at most MAX_CHANNELS keys and MAX_PAYLOADS payloads (3-5 KB each), the least recently used forgotten first (its
 * next voucher is then checked by the SDK again).
 */
export class AcceptedChannels {
  static readonly MAX_CHANNELS = 10_000;
  static readonly MAX_PAYLOADS = 4_096;
  private readonly keys = new Map<string, string>();
  private readonly payloads = new Map<string, PaymentPayload>();

  /** The config-and-terms key the channel was accepted with. */
  key(channelId: string): string | undefined {
    return this.keys.get(channelId.toLowerCase());
  }

  /** The payload last accepted on the channel for `route` (its use keeps it). */
  payload(channelId: string, route: string): PaymentPayload | undefined {
    const at = `${channelId.toLowerCase()} ${route}`;
    const payload = this.payloads.get(at);
    if (payload) bump(this.payloads, at, payload, AcceptedChannels.MAX_PAYLOADS);
    return payload;
  }

  /** The SDK's verify accepted `payload` (a copy is kept: the SDK's own object may change after) on `route`, if known. */
  accept(channelId: string, key: string, route: string | undefined, payload: PaymentPayload): void {
    const id = channelId.toLowerCase();
    bump(this.keys, id, key, AcceptedChannels.MAX_CHANNELS);
    if (route !== undefined) bump(this.payloads, `${id} ${route}`, structuredClone(payload), AcceptedChannels.MAX_PAYLOADS);
  }
}

/** `key` set last in `map` (its most recent), the oldest dropped past `max`. */
function bump<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

export interface VoucherCheckCounts {
  /** Vouchers this hook admitted. */
  fast: number;
  /** Payloads it left to the SDK's hook. */
  passed: number;
}

/**
 * The scheme as the resource server registers it: the same object underneath (its methods, storage and state),
 * with this check in front of its before-verify hook.
 */
export function withFastVoucherCheck(scheme: Scheme, counts: VoucherCheckCounts = { fast: 0, passed: 0 }, accepted = new AcceptedChannels()): Scheme {
  const hooks = scheme.schemeHooks;
  const sdkBeforeVerify = hooks.onBeforeVerify!;

  const beforeVerify: BeforeVerify = async (ctx) => {
    const fast = await check(ctx);
    if (fast) {
      counts.fast++;
      return fast;
    }
    counts.passed++;
    const answer = await sdkBeforeVerify(ctx);
    remember(ctx, answer);
    return answer;
  };

  async function check(ctx: BeforeVerifyContext): Promise<Awaited<ReturnType<BeforeVerify>> | undefined> {
    const { paymentPayload, requirements } = ctx;
    const raw = paymentPayload.payload as unknown;
    if (!isBatchSettlementVoucherPayload(raw)) return undefined;
    const voucher = raw.voucher as Voucher;
    const config = raw.channelConfig as ChannelConfig;
    const key = acceptanceKey(config, requirements);
    if (accepted.key(voucher.channelId) !== key) return undefined;
    const channel = await scheme.getStorage().get(voucher.channelId);
    if (!channel || !(await isNextVoucher(channel, voucher, config, requirements, scheme.getOnchainStateTtlMs()))) return undefined;
    // What the SDK's hook records for a voucher it checked locally; its after-verify hook reserves the channel with it.
    scheme.mergeRequestContext(paymentPayload, { channelId: voucher.channelId, pendingId: nextPendingId(), channelSnapshot: channel, localVerify: true });
    // Matched and validated by the SDK before this hook, checked here: the lane may take its repeats on this route.
    const route = attemptOf(ctx)?.entry.url;
    if (route !== undefined && !accepted.payload(voucher.channelId, route)) accepted.accept(voucher.channelId, key, route, paymentPayload as PaymentPayload);
    return {
      skip: true,
      result: {
        isValid: true,
        payer: config.payer,
        extra: {
          channelId: voucher.channelId,
          balance: channel.balance,
          totalClaimed: channel.totalClaimed,
          withdrawRequestedAt: channel.withdrawRequestedAt,
          refundNonce: channel.refundNonce.toString(),
        },
      },
    };
  }

  /** A voucher the SDK's hook accepted locally: its config is known good for this route from now on. */
  function remember(ctx: BeforeVerifyContext, answer: Awaited<ReturnType<BeforeVerify>>) {
    const raw = ctx.paymentPayload.payload as unknown;
    if (!isBatchSettlementVoucherPayload(raw) || !answer || !('skip' in answer) || !answer.skip || !answer.result.isValid) return;
    accepted.accept((raw.voucher as Voucher).channelId, acceptanceKey(raw.channelConfig as ChannelConfig, ctx.requirements), attemptOf(ctx)?.entry.url, ctx.paymentPayload as PaymentPayload);
  }

  const wrapped = Object.create(scheme) as Scheme;
  Object.defineProperty(wrapped, 'schemeHooks', { value: { ...hooks, onBeforeVerify: beforeVerify }, enumerable: true });
  return wrapped;
}

/**
 * A reservation's id: unique to this process's reservations (a random prefix, then a count), as the SDK's random
 * 32 bytes are; drawing those from the system's generator cost more than the rest of the reservation.
 */
const PENDING_PREFIX = randomBytes(16).toString('hex');
let pendingCount = 0n;
export function nextPendingId(): string {
  pendingCount++;
  return `0x${PENDING_PREFIX}${pendingCount.toString(16).padStart(32, '0')}`;
}

/**
 * Whether `voucher` is the channel's next one, as the SDK's local check has it: the channel's on-chain state fresh,
 * the cumulative amount the charge so far plus the price, within the balance and above what is claimed, signed by
 * the channel's payer authorizer (strict ECDSA).
 */
export async function isNextVoucher(
  channel: Channel,
  voucher: Voucher,
  config: ChannelConfig,
  requirements: { amount: string; network: string },
  onchainStateTtlMs: number,
): Promise<boolean> {
  if (channel.onchainSyncedAt === undefined || Date.now() - channel.onchainSyncedAt > onchainStateTtlMs) return false;
  const max = BigInt(voucher.maxClaimableAmount);
  if (max !== BigInt(channel.chargedCumulativeAmount) + BigInt(requirements.amount)) return false;
  if (max > BigInt(channel.balance) || max <= BigInt(channel.totalClaimed)) return false;
  if (typeof voucher.channelId !== 'string' || !BYTES32.test(voucher.channelId)) return false;
  const signer = await recoverSigner(voucherDigestBytes(voucher.channelId, max, chainIdOf(requirements.network)), voucher.signature);
  return signer !== undefined && signer === config.payerAuthorizer.toLowerCase();
}

/** The voucher's EIP-712 digest: what the SDK's hashTypedData gives for it (a test holds the two equal). */
export function voucherDigest(channelId: Hex, max: bigint, chainId: number): Hex {
  return toHex(voucherDigestBytes(channelId, max, chainId));
}

/** The digest as bytes, built without hex round trips: keccak256(0x1901 ‖ domain separator ‖ keccak256(type hash ‖ channel id ‖ amount)). */
function voucherDigestBytes(channelId: Hex, max: bigint, chainId: number): Uint8Array {
  const struct = new Uint8Array(96);
  struct.set(VOUCHER_TYPEHASH, 0);
  struct.set(Buffer.from(channelId.slice(2), 'hex'), 32);
  struct.set(Buffer.from(max.toString(16).padStart(64, '0'), 'hex'), 64);
  const digest = new Uint8Array(66);
  digest[0] = 0x19;
  digest[1] = 0x01;
  digest.set(domainSeparator(chainId), 2);
  digest.set(keccak256(struct, 'bytes'), 34);
  return keccak256(digest, 'bytes');
}

function domainSeparator(chainId: number): Uint8Array {
  let ds = domains.get(chainId);
  if (!ds) {
    ds = hexToBytes(hashDomain({
      domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: BigInt(chainId), verifyingContract: getAddress(BATCH_SETTLEMENT_ADDRESS) },
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
      },
    }));
    domains.set(chainId, ds);
  }
  return ds;
}


/** The exact config and the route's terms it was accepted for: a voucher reusing both needs no second check of them. */
function acceptanceKey(config: ChannelConfig, requirements: BeforeVerifyContext['requirements']): string {
  return JSON.stringify([config, requirements.scheme, requirements.network, requirements.asset, requirements.payTo, requirements.extra ?? null]);
}

function chainIdOf(network: string): number {
  const id = Number(network.split(':')[1]);
  if (!Number.isSafeInteger(id)) throw new Error(`not an EVM network: ${network}`);
  return id;
}

