// How to authenticate and pay, as the server says it: the access summary made from the settings (the key
// contact, x402's terms and facilitator), and the words llms.txt and the agent card put around it.
import type { AccessSummary } from '../catalog/access-summary.ts';
import type { Config } from '../config.ts';
import { howToGetKey } from '../access/keys/key-contact.ts';
import { facilitatorName } from '../payments/core/facilitator-name.ts';
import { publishedSigningKey } from '../payments/core/signing-key.ts';

export function accessSummary(config: Config): AccessSummary {
  const x = config.x402;
  return {
    price: x.price,
    api_key: { header: 'x-api-key', how_to_get: howToGetKey(config.operatorContact), contact: config.operatorContact ?? null },
    x402: {
      enabled: x.active,
      version: 2,
      scheme: 'exact',
      network: x.network,
      price: x.price,
      networks: x.active
        ? [
            ...(x.asset && x.payTo ? [{ scheme: 'exact', network: x.network, asset: x.asset.address, payTo: x.payTo }] : []),
            ...(x.svm ? [{ scheme: 'exact', network: x.svm.network, asset: x.svm.asset.address, payTo: x.svm.payTo }] : []),
          ]
        : [],
      asset: x.asset?.address ?? null,
      payTo: x.payTo ?? null,
      facilitator: x.active ? facilitatorName(x) : null,
      batch_settlement: x.active && (x.batch.mode === 'auto' || x.batch.mode === 'true'),
      receipts: x.active && x.signingKey ? publishedSigningKey(x.signingKey) : null,
    },
  };
}

/** The x402 payment-identifier extension (idempotent paid retries), as llms.txt and the agent card describe it. */
export const PAYMENT_IDENTIFIER_TEXT =
  'Every 402 declares the x402 payment-identifier extension, as optional. A client may put an id (16-128 characters: letters, digits, - and _) ' +
  'in its payment payload (extensions["payment-identifier"].info.id). Resending the same PAYMENT-SIGNATURE (same id, same payment) returns the first ' +
  'answer again without a second settlement: that is how to recover an answer lost to a dropped connection, without paying twice. ' +
  'The same id with a different payment, or on another request (another route or query), is refused with 409. A paid call answered 503 whose body ' +
  'says to resend the same payment may have been paid: resend the same PAYMENT-SIGNATURE after Retry-After to get its answer (never charged twice), never a new payment.';

/** The x402 Bazaar extension, as llms.txt and the agent card describe it. */
export const BAZAAR_TEXT =
  "Every 402 also carries the x402 Bazaar discovery extension (extensions.bazaar): the route's query parameters as JSON Schema with an example, " +
  'and its answer as JSON Schema with a minimal example of the shape (not real data).';

/** Signed offers and receipts (X402_SIGNING_KEY), as llms.txt and the agent card describe them. */
export const RECEIPTS_TEXT =
  'Every 402 carries signed offers and every paid answer a signed receipt (the x402 offer-receipt extension, JWS ES256K): extensions["offer-receipt"].info.offers in ' +
  'PAYMENT-REQUIRED, extensions["offer-receipt"].info.receipt in PAYMENT-RESPONSE. A receipt\'s payload names the network, the resource URL, the payer, when it was issued ' +
  'and the transaction; its JWS protected header carries "content-digest", the answer\'s Content-Digest header (RFC 9530: sha-256 of the exact bytes of the body), ' +
  'so the receipt proves which answer was paid for. Verify them against the public key published here (x402.receipts: its JWK, kid and address).';

/** The networks beside Base a payer may pay on (Solana when the server offers it), as one clause; empty when Base is the only one. */
function otherNetworks(a: AccessSummary): string {
  const others = a.x402.networks.filter((n) => n.network !== a.x402.network);
  return others.map((n) => `; or the same price in the token ${n.asset} on ${n.network}, to ${n.payTo}`).join('');
}

export function accessText(a: AccessSummary): string {
  const key = `Paid endpoints accept an API key in the x-api-key header (no payment is taken when a key is sent). ${a.api_key.how_to_get}`;
  if (!a.x402.enabled) return `Free endpoints need nothing. ${key} x402 pay-per-call (${a.price}) is not configured on this server, so paid endpoints need an API key.`;
  const schemes = a.x402.batch_settlement
    ? 'scheme "exact", or "batch-settlement" (one deposit, then a signed voucher per call) when the 402 lists it beside "exact"'
    : 'scheme "exact"';
  return (
    `Free endpoints need nothing. ${key} Or pay per call with x402 (protocol v2, ${schemes}): ${a.price} in the token ${a.x402.asset} on ${a.x402.network}, to ${a.x402.payTo}${otherNetworks(a)}. ` +
    'Call a paid endpoint without credentials to receive HTTP 402 with a PAYMENT-REQUIRED header (base64 JSON) and a JSON body stating the price; ' +
    'retry with a PAYMENT-SIGNATURE header (an x402 client such as @x402/fetch does this). A successful paid call returns PAYMENT-RESPONSE; a failed call is never charged.\n\n' +
    `Retries without paying twice. ${PAYMENT_IDENTIFIER_TEXT}\n\n${BAZAAR_TEXT}` +
    (a.x402.receipts ? `\n\nSigned offers and receipts. ${RECEIPTS_TEXT} Key id: ${a.x402.receipts.kid}; address ${a.x402.receipts.address}.` : '')
  );
}
