// Signed offers and receipts (X402_SIGNING_KEY): the x402 `offer-receipt` extension
// (specs/extensions/extension-offer-and-receipt.md; @x402/extensions/offer-receipt), JWS format, ES256K.
//
//   every 402   → extensions["offer-receipt"].info.offers: one signed offer per `accepts` entry (resource URL,
//                 scheme, network, asset, payTo, amount, validUntil), made by the package's own createOfferJWS
//   a paid 200  → PAYMENT-RESPONSE's extensions["offer-receipt"].info.receipt: a JWS whose payload is the spec's
//                 receipt (version, network, resourceUrl, payer, issuedAt, and the transaction hash), and whose
//                 protected header carries, beside alg and kid, `content-digest`: the RFC 9530 Content-Digest of
//                 the answer's exact bytes, the same value as the answer's Content-Digest header
//
// Why the digest sits in the header: the receipt's payload is fixed by the spec (§5.2: no field for what was
// delivered) and EIP-712's Receipt type cannot take one at all, but a JWS protected header is signed with the
// payload, so the package's verifyReceiptSignatureJWS checks it too, while the payload stays exactly the spec's
// (a verifier that does not know the parameter ignores it, as RFC 7515 §4 says). The transaction hash is included
// (`includeTxHash`): the payer already reads it in PAYMENT-RESPONSE, and with it the receipt says which on-chain
// payment it acknowledges.
//
// The package's extension drives both (placement, schema, which answers get one); this server's issuer makes the
// JWSs. The extension hands an issuer no response body, so a receipt's issuer is made per settlement, with the
// digest of that settlement's body (transportContext.responseBody: the bytes settle.ts sends). This module (and
// the package, which brings viem and jose) is loaded only when X402_SIGNING_KEY is set (x402.ts).
import {
  canonicalize,
  createOfferJWS,
  createOfferReceiptExtension,
  declareOfferReceiptExtension,
  OFFER_RECEIPT,
  type JWSSignedReceipt,
  type JWSSigner,
  type OfferInput,
  type OfferReceiptIssuer,
  type SignedOffer,
} from '@x402/extensions/offer-receipt';
import type { ResourceServerExtension, SettleFailureContext, SettleResponse, SettleResultContext } from '@x402/core/types';
import { checksumEvmAddress, looksLikeEvmAddress } from '../../params/evm-address.ts';
import { contentDigest, SIGNING_ALG, type SigningKey } from './signing-key.ts';

/** The JWS header parameter of a receipt that holds the answer's Content-Digest. */
export const CONTENT_DIGEST_PARAM = 'content-digest';

/** What every paid route's 402 declares: receipts name the transaction; offers last maxTimeoutSeconds (the SDK's default). */
const DECLARATION = declareOfferReceiptExtension({ includeTxHash: true });

/** The receipt payload's schema version (§5.2). */
const RECEIPT_VERSION = 1;

const b64u = (text: string) => Buffer.from(text).toString('base64url');

/** Offers and receipts signed with one key, for the payment table and the resource servers built from it. */
export interface OfferReceipts {
  /** What every paid route declares (route-table.ts). */
  declaration: Record<string, unknown>;
  /** The extension of one resource server; `isRefund`: a batch-settlement refund, no paid call, so no receipt. */
  forServer(isRefund?: (payload: unknown) => boolean): ServerReceipts;
}

export interface ServerReceipts {
  /** To register on the resource server: its 402s' offers and its settlements' receipts. */
  extension: ResourceServerExtension;
  /** The receipt of a settlement recovered from the chain, which the SDK returns without running its extensions. */
  recovered(ctx: SettleFailureContext, result: SettleResponse): Promise<Record<string, unknown> | undefined>;
}

export function offerReceipts(key: SigningKey): OfferReceipts {
  const offers = new SignedOffers(key);
  return {
    declaration: DECLARATION,
    forServer(isRefund) {
      const extension = receiptExtension(key, offers, isRefund);
      return { extension, recovered: (ctx, result) => receiptOfRecovered(extension, ctx, result) };
    },
  };
}

function receiptExtension(key: SigningKey, offers: SignedOffers, isRefund: ((payload: unknown) => boolean) | undefined): ResourceServerExtension {
  const official = createOfferReceiptExtension(issuer(key, offers, undefined));
  return {
    ...official,
    // The declaration given here is not the route's: the SDK builds the request's 402 (its offers) on the same
    // object it later hands settle, so by then "offer-receipt" holds the offers, and includeTxHash is lost. Every
    // route declares the same, so that declaration is used.
    enrichSettlementResponse: async (_declaration, context) => {
      const ctx = context as SettleResultContext;
      if (isRefund?.(ctx.paymentPayload?.payload)) return undefined;
      const body = (ctx.transportContext as { responseBody?: Uint8Array } | undefined)?.responseBody;
      const receipts = createOfferReceiptExtension(issuer(key, offers, body ? contentDigest(body) : undefined));
      return receipts.enrichSettlementResponse!(DECLARATION[OFFER_RECEIPT], context);
    },
  };
}

/** The issuer the extension calls: offers from `offers`; receipts binding `digest` (the Content-Digest of the answer paid for). */
function issuer(key: SigningKey, offers: SignedOffers, digest: string | undefined): OfferReceiptIssuer {
  const kid = key.published.kid;
  return {
    format: 'jws',
    kid,
    issueOffer: (resourceUrl, input) => offers.issue(resourceUrl, input),
    issueReceipt: async (resourceUrl, payer, network, transaction) => {
      // The spec's receipt payload (§5.2) in its JWS form: `transaction` only when there is one. The payer in one
      // spelling, EIP-55, whatever the scheme reported (batch-settlement lowercases it), as the ledger writes it.
      const payload = { version: RECEIPT_VERSION, network, resourceUrl, payer: looksLikeEvmAddress(payer) ? checksumEvmAddress(payer) : payer, issuedAt: Math.floor(Date.now() / 1000), ...(transaction ? { transaction } : {}) };
      const header = { alg: SIGNING_ALG, kid, ...(digest ? { [CONTENT_DIGEST_PARAM]: digest } : {}) };
      const input = `${b64u(JSON.stringify(header))}.${b64u(canonicalize(payload))}`;
      return { format: 'jws', signature: `${input}.${key.sign(input)}` } satisfies JWSSignedReceipt;
    },
  };
}

/**
 * Offers signed by the package's createOfferJWS. A 402 is answered to anyone, so an offer is signed once per
 * second per route and option: its validUntil counts whole seconds, so within one second the same terms make
 * the same payload, and a flood of unpaid requests costs no signature each (at most the routes times their
 * options per second, and no more entries than that).
 */
class SignedOffers {
  private readonly signer: JWSSigner;
  private second = 0;
  private made = new Map<string, Promise<SignedOffer>>();

  constructor(key: SigningKey) {
    this.signer = { kid: key.published.kid, format: 'jws', algorithm: SIGNING_ALG, sign: async (input) => key.sign(input) };
  }

  issue(resourceUrl: string, input: OfferInput): Promise<SignedOffer> {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.made = new Map();
    }
    const id = [resourceUrl, input.acceptIndex, input.scheme, input.network, input.asset, input.payTo, input.amount, input.offerValiditySeconds].join('\n');
    let offer = this.made.get(id);
    if (!offer) {
      offer = createOfferJWS(resourceUrl, input, this.signer);
      offer.catch(() => this.made.delete(id));
      this.made.set(id, offer);
    }
    return offer;
  }
}

/**
 * The receipt of a settlement recovered from the chain (settle-outcome.ts: the settle went unheard, the transfer
 * landed). The SDK returns such a settlement without running its extensions, so the extension is run here, with
 * the same body; undefined when the route declares no receipt or signing failed.
 */
async function receiptOfRecovered(extension: ResourceServerExtension, ctx: SettleFailureContext, result: SettleResponse): Promise<Record<string, unknown> | undefined> {
  const declaration = ctx.declaredExtensions?.[OFFER_RECEIPT];
  if (declaration === undefined || !extension.enrichSettlementResponse) return undefined;
  try {
    const receipt = await extension.enrichSettlementResponse(declaration, { ...ctx, result } as SettleResultContext);
    return receipt === undefined ? undefined : { [OFFER_RECEIPT]: receipt };
  } catch {
    return undefined;
  }
}

