// The SDK's batch-settlement client scheme, with a channel's id remembered. The SDK derives the id (an EIP-712 hash
// of the channel's config: 0.5-1 ms of JavaScript hashing) anew for every payment; this is most of what a voucher
// call costs the client once its signature is made ahead (presign.ts). The id is a pure function of the config and
// the network, so it is computed once per channel; a payment that is a voucher alone is then built here exactly as
// the SDK builds it (its own signVoucher, the same payload); one that needs a deposit or a top-up, or a channel
// this client has no state of, goes to the SDK as before. The answer's channel state is taken in as the SDK's own hook
// takes it (updateChannelFromSettle), with the remembered id; a refund's answer, a refusal, a corrective 402 go to the
// SDK's hook.
import type { PaymentPayloadContext, PaymentPayloadResult, PaymentRequirements, SchemeClientHooks } from '@x402/core/types';
import { isBatchSettlementDepositPayload, isBatchSettlementRefundPayload, type ClientEvmSigner } from '@x402/evm';
import {
  BatchSettlementEvmScheme,
  computeChannelId,
  signVoucher,
  updateChannelFromSettle,
  type BatchSettlementEvmSchemeOptions,
  type ClientChannelStorage,
} from '@x402/evm/batch-settlement/client';

type ChannelConfig = ReturnType<BatchSettlementEvmScheme['buildChannelConfig']>;

/** Channel ids kept: one per (payee, token, network) this client pays; past this many, they are forgotten at once. */
const MAX_IDS = 64;

export class RememberingBatchScheme extends BatchSettlementEvmScheme {
  private readonly ids = new Map<string, `0x${string}`>();

  constructor(
    private readonly voucherSigner_: ClientEvmSigner,
    private readonly channels: ClientChannelStorage,
    options: Omit<BatchSettlementEvmSchemeOptions, 'storage' | 'voucherSigner'>,
  ) {
    super(voucherSigner_, { ...options, storage: channels });
    const sdk = this.schemeHooks;
    (this as { schemeHooks: SchemeClientHooks }).schemeHooks = {
      ...sdk,
      // The SDK's onPaymentResponse for a voucher's or a deposit's success, which derives the channel's id anew.
      onPaymentResponse: async (ctx: Parameters<NonNullable<SchemeClientHooks['onPaymentResponse']>>[0]) => {
        const settled = ctx.settleResponse;
        const payload = ctx.paymentPayload.payload;
        if (!settled?.success || isBatchSettlementRefundPayload(payload)) return sdk.onPaymentResponse?.(ctx);
        const chargedAmount = (settled.extra as { chargedAmount?: unknown } | undefined)?.chargedAmount;
        if (chargedAmount !== undefined && typeof chargedAmount !== 'string') throw new Error('invalid chargedAmount: not a non-negative integer');
        const channelState = (settled.extra as { channelState?: { chargedCumulativeAmount?: string } } | undefined)?.channelState;
        await updateChannelFromSettle(this.channels, {
          server: { chargedAmount, chargedCumulativeAmount: channelState?.chargedCumulativeAmount },
          local: {
            channelId: this.channelId(this.buildChannelConfig(ctx.requirements), ctx.requirements.network),
            requestAmount: ctx.requirements.amount,
            depositAmount: isBatchSettlementDepositPayload(payload) ? payload.deposit.amount : undefined,
          },
        });
      },
    };
  }

  override async createPaymentPayload(x402Version: number, requirements: PaymentRequirements, context?: PaymentPayloadContext): Promise<PaymentPayloadResult> {
    const config = this.buildChannelConfig(requirements);
    const channelId = this.channelId(config, requirements.network);
    const held = await this.channels.get(channelId.toLowerCase());
    const balance = BigInt(held?.balance ?? '0');
    const next = BigInt(held?.chargedCumulativeAmount ?? '0') + BigInt(requirements.amount);
    // What the SDK does in its voucher-only case (a deposit held, the next cumulative amount within it).
    if (!held || balance === 0n || next > balance) return super.createPaymentPayload(x402Version, requirements, context);
    const voucher = await signVoucher(this.voucherSigner_, channelId, String(next), requirements.network);
    return { x402Version, payload: { type: 'voucher', channelConfig: config, voucher } };
  }

  /** The channel's id, computed once per config and network. */
  channelId(config: ChannelConfig, network: string): `0x${string}` {
    const key = `${network} ${JSON.stringify(config)}`;
    let id = this.ids.get(key);
    if (id) return id;
    if (this.ids.size >= MAX_IDS) this.ids.clear();
    id = computeChannelId(config, network);
    this.ids.set(key, id);
    return id;
  }
}
