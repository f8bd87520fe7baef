// What the x402 end-to-end tests share: the variables of a paid app over the test chain and facilitator,
// with the price route's venues pointed at a fake exchange, and a payer's client (the official
// @x402/fetch client with the exact EVM scheme), optionally sending a payment identifier.
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { x402Client } from '@x402/fetch';
import type { mnemonicToAccount } from 'viem/accounts';

export interface PaidSetting {
  network: string;
  /** The test token (fx.usdc). */
  asset: string;
  payTo: string;
  /** The local facilitator's URL. */
  facilitator: string;
  /** The fake exchange the price route asks (Binance and Coinbase). */
  exchange: string;
  /** The chain's JSON-RPC (X402_RPC_URL), where outcomes the facilitator did not tell are read; none when omitted. */
  rpcUrl?: string;
}

/** The variables of a paid app on the test chain; `CACHE_TTL_PRICE_S=0`: every paid call's handler reaches the fake. */
export function paidEnv(s: PaidSetting, timeoutMs = 3000): Record<string, string> {
  return {
    X402_NETWORK: s.network,
    X402_ASSET: s.asset,
    X402_ASSET_NAME: 'Test USDC',
    X402_PAY_TO: s.payTo,
    X402_FACILITATOR: s.facilitator,
    X402_FACILITATOR_TIMEOUT_MS: String(timeoutMs),
    BINANCE_SPOT_BASE_URL: s.exchange,
    COINBASE_BASE_URL: s.exchange,
    CACHE_TTL_PRICE_S: '0',
    ...(s.rpcUrl ? { X402_RPC_URL: s.rpcUrl } : {}),
  };
}

/**
 * A payer's client paying at most `maxAmount` per call in the test token; with `identifier`, it sends the
 * id that function returns with each payment (none while it returns ''), as an agent registering the
 * payment-identifier extension does.
 */
export function payingClient(
  payer: ReturnType<typeof mnemonicToAccount>,
  s: Pick<PaidSetting, 'network' | 'asset'>,
  options: { maxAmount?: string; identifier?: () => string } = {},
): x402Client {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payer, networks: [s.network as `${string}:${string}`] });
  client.setSpendControls({ allowedAssets: [{ network: s.network as `${string}:${string}`, asset: s.asset, maxAmountPerPayment: options.maxAmount ?? '10000' }] });
  const identifier = options.identifier;
  if (identifier) {
    client.registerExtension({
      key: PAYMENT_IDENTIFIER,
      enrichPaymentPayload: async (payload) => {
        const id = identifier();
        return id ? { ...payload, extensions: appendPaymentIdentifierToExtensions(structuredClone(payload.extensions ?? {}), id) } : payload;
      },
    });
  }
  return client;
}
