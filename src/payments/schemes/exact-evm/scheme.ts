// `exact` on an EVM network (@x402/evm's ExactEvmScheme): the payer signs an EIP-3009 transferWithAuthorization
// of the price to pay_to, the facilitator verifies it and submits it. The authorization is the payment's
// one-time key (payer, nonce, validBefore: authorization.ts), and its outcome can always be asked of the chain
// (the token's authorizationState, chain.ts). Offered on every paid route from the settings alone (X402_NETWORK,
// X402_ASSET, X402_PAY_TO), first. With X402_EXACT_VERIFY=local (the default), a payment signed by an externally
// owned account is checked here rather than by the facilitator's /verify (local-verify.ts).
import type { x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { PaymentScheme } from '../../core/scheme.ts';
import type { PaymentSettings } from '../../settings.ts';
import { eip3009Of } from './authorization.ts';
import type { AuthorizationChain } from './chain.ts';
import { verifyExactLocally } from './local-verify.ts';

export const EXACT = 'exact';

const ATOMIC = /^\d+$/;

/** The `exact` scheme on X402_NETWORK at `amount` (atomic units of X402_ASSET); `chain`: where unknown outcomes are read. */
export function exactEvmScheme(x402: PaymentSettings, amount: string, chain: AuthorizationChain | undefined): PaymentScheme {
  const asset = x402.asset!;
  const offer = {
    accepts: {
      scheme: EXACT,
      network: x402.network,
      payTo: x402.payTo!,
      price: { amount, asset: asset.address, extra: { name: asset.name, version: asset.version } },
      maxTimeoutSeconds: x402.maxTimeoutS,
    },
    register: (resourceServer: x402ResourceServer) => void resourceServer.register(x402.network, new ExactEvmScheme()),
  };
  return {
    scheme: EXACT,
    network: x402.network,
    offer: () => offer,
    // Its verify is a facilitator round trip: the route's work overlaps it.
    prefetch: true,
    authorizationOf(payload) {
      const auth = eip3009Of(payload);
      return auth && { network: x402.network, payer: auth.from, nonce: auth.nonce, validBefore: auth.validBefore };
    },
    outcomes: chain,
    chargedAmount: (result) => (result.amount && ATOMIC.test(result.amount) ? result.amount : undefined),
    ...(x402.exactVerify === 'local' ? { localVerify: (payload, requirements) => verifyExactLocally(payload, requirements) } : {}),
  };
}
