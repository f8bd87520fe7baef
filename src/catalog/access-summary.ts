// How to authenticate and pay, in one structure that /v1/status, llms.txt and the agent card share: its schema
// and type, what the routes are told (RouteContext.access). It is made from the settings of access and payments,
// which stand above this core, by src/reference/access-guide.ts.
import { z } from 'zod';

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
    asset: z.string().nullable(),
    payTo: z.string().nullable(),
    facilitator: z.string().nullable(),
    batch_settlement: z
      .boolean()
      .describe('X402_BATCH_SETTLEMENT: the "batch-settlement" scheme (one deposit, a signed voucher per call) is offered beside "exact" when the facilitator lists it; the 402 says which'),
  }),
});

export type AccessSummary = z.output<typeof accessSummarySchema>;
