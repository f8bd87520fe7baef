// How to authenticate and pay, in one structure that /v1/status, llms.txt and the agent card share: its schema
// and type, what the routes are told (RouteContext.access). It is made from the settings of access and payments,
// which stand above this core, by src/reference/access-guide.ts.
import { z } from 'zod';

/** The public part of the key offers and receipts are signed with (src/payments/core/signing-key.ts makes it). */
export const signingKeySchema = z.object({
  format: z.literal('jws').describe('Offers and receipts are JWS compact serialisations (offer-receipt extension, format "jws")'),
  alg: z.literal('ES256K').describe('ECDSA over secp256k1 with SHA-256 (RFC 8812)'),
  kid: z.string().describe('The kid in every offer\'s and receipt\'s JWS header: did:jwk of the key below'),
  jwk: z.object({ kty: z.literal('EC'), crv: z.literal('secp256k1'), x: z.string(), y: z.string() }).describe('The public key as a JWK (RFC 7517): what verifyReceiptSignatureJWS takes'),
  address: z.string().describe('The EVM address of the same key (EIP-55)'),
});

export const accessSummarySchema = z.object({
  price: z.string().describe('Price of one paid call'),
  api_key: z.object({
    header: z.literal('x-api-key'),
    how_to_get: z.string().describe("How to ask this server's operator for a key (keys are free)"),
    contact: z.string().nullable().describe("OPERATOR_CONTACT: the operator's email address or URL for key requests; null when the operator gave none"),
  }),
  x402: z.object({
    enabled: z.boolean(),
    version: z.literal(2),
    scheme: z.literal('exact'),
    network: z.string().describe('CAIP-2 network id'),
    price: z.string(),
    networks: z
      .array(
        z.object({
          scheme: z.string().describe('x402 scheme, e.g. exact'),
          network: z.string().describe('CAIP-2 network id'),
          asset: z.string().describe('Token paid in: an EVM contract, or a Solana mint'),
          payTo: z.string().describe('Address that receives the payment on that network'),
        }),
      )
      .describe(
        'Where a paid call may be paid, in the order the 402 offers them: exact on the network above (Base), then exact on Solana (SPL USDC) when X402_SVM_PAY_TO is set and the facilitator lists exact on that network; empty when x402 is off',
      ),
    asset: z.string().nullable(),
    payTo: z.string().nullable(),
    facilitator: z.string().nullable(),
    batch_settlement: z
      .boolean()
      .describe('X402_BATCH_SETTLEMENT auto (the default) or true: the "batch-settlement" scheme (one deposit, a signed voucher per call) is offered beside "exact" when the facilitator lists it; the 402 says which (/v1/status batch_settlement: where it stands)'),
    receipts: signingKeySchema
      .nullable()
      .describe(
        'X402_SIGNING_KEY: the public key this server signs x402 offers (every 402) and receipts (every paid answer, binding its Content-Digest) with, in the offer-receipt extension; null when it signs nothing',
      ),
  }),
});

export type AccessSummary = z.output<typeof accessSummarySchema>;
