// `exact` on Solana (@x402/svm's ExactSvmScheme): the payer signs an SPL token transfer of the price to
// pay_to, the facilitator verifies it, signs it as fee payer and sends it. Offered beside Base's `exact` when
// X402_SVM_PAY_TO is set and the facilitator's /supported lists `exact` on X402_SVM_NETWORK with a fee payer
// (asked once, logged once when it does not: Base only then). Prefetched as Base's is (its verify is a facilitator
// round trip); its outcome is read from the chain by its transaction's signature status (outcome.ts).
import type { FacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import type { PaymentLog } from '../../core/log.ts';
import type { PaymentScheme, SchemeOffer } from '../../core/scheme.ts';
import type { SvmPaymentSettings } from '../../svm-settings.ts';
import { svmAuthorizationOf, toPaymentAuthorization } from './authorization.ts';
import type { SvmOutcomeReader } from './outcome.ts';

const SCHEME = 'exact';
const ATOMIC = /^\d+$/;

export interface ExactSvmOptions {
  svm: SvmPaymentSettings;
  /** The price in atomic units of the SPL token. */
  amount: string;
  maxTimeoutS: number;
  facilitator: FacilitatorClient;
  log: PaymentLog;
  outcomes: SvmOutcomeReader | undefined;
}

export function exactSvmScheme(o: ExactSvmOptions): PaymentScheme {
  const { svm } = o;
  const offer: SchemeOffer = {
    accepts: { scheme: SCHEME, network: svm.network, payTo: svm.payTo, price: { amount: o.amount, asset: svm.asset.address, extra: {} }, maxTimeoutSeconds: o.maxTimeoutS },
    register: (resourceServer: x402ResourceServer) => void resourceServer.register(svm.network, new ExactSvmScheme()),
  };
  let decided: Promise<SchemeOffer | undefined> | undefined;
  const decide = async () => {
    const supported = await o.facilitator.getSupported();
    const kind = supported.kinds.find((k) => k.x402Version === 2 && k.scheme === SCHEME && k.network === svm.network);
    if (typeof kind?.extra?.feePayer !== 'string') {
      o.log.warn({ network: svm.network }, "x402: the facilitator's /supported does not list exact on this Solana network with a fee payer; offering Base only");
      return undefined;
    }
    o.log.info({ network: svm.network, feePayer: kind.extra.feePayer }, 'x402: offering exact on Solana beside Base');
    return offer;
  };
  return {
    scheme: SCHEME,
    network: svm.network,
    offer() {
      decided ??= decide().catch((err) => {
        decided = undefined;
        throw err;
      });
      return decided;
    },
    prefetch: true,
    authorizationOf(payload) {
      const auth = svmAuthorizationOf(payload);
      return auth && toPaymentAuthorization(auth, svm.network, o.maxTimeoutS);
    },
    outcomes: o.outcomes,
    chargedAmount: (result) => (result.amount && ATOMIC.test(result.amount) ? result.amount : undefined),
  };
}
