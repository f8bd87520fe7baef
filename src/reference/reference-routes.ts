// The reference documents: OpenAPI (/openapi.json, and /docs/json and /docs/yaml for Swagger UI), /llms.txt
// and /.well-known/agent.json. Each is generated from the catalog once, as bytes, when the server has started
// (`build`, or the first request if it comes first: routes are final by then), and served as those bytes
// with an ETag and their precompressed forms (src/reference/prebuilt.ts). The OpenAPI document is made again
// when the x402 terms its paid operations publish are made (payment-terms.ts): once the payment table is ready,
// and each time it changes. They count per client IP in the status pages' bucket (FREE_RATE_LIMIT a minute): a
// 226 KB document is not a free way to load the server.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { stringify as yamlText } from 'yaml';
import { clientBucketName } from '../access/rate-limit/client-bucket.ts';
import { afterLimit, type Limit, type RateLimiter } from '../access/rate-limit/rate-limit.ts';
import { PrebuiltDocument } from './prebuilt.ts';
import { agentCard } from './agent-card.ts';
import type { RouteContext } from '../catalog/route.ts';
import { llmsTxt } from './llms-txt.ts';
import type { PublishedTerms } from '../payments/core/published-terms.ts';
import { withPaymentTerms } from './payment-terms.ts';

export interface ReferenceDocuments {
  openapi: PrebuiltDocument;
  openapiYaml: PrebuiltDocument;
  llmsTxt: PrebuiltDocument;
  agentCard: PrebuiltDocument;
  /** Makes every document's bytes now; resolves once their compressed forms are made too. */
  build(): Promise<void>;
  /** The rate limit of the reference pages, as an onRequest hook. */
  limited(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void;
  /**
   * Resolves once the OpenAPI document served carries the x402 terms of the payment table ready last, asking the
   * facilitator again until it answers (tests, benchmarks; never with x402 off).
   */
  termsPublished(): Promise<void>;
}

/** The reference pages' limit: the status pages' bucket per client IP (access-control.ts names it the same). */
export const referenceLimit = (max: number): Limit<'ref'> => ({ scope: 'ref', max, per: 'per client on the reference pages' });

const notAnswered = () => false;

/**
 * `terms`: the x402 terms of the paid routes (undefined while x402 is off), put in the OpenAPI document's
 * x-payment-info once known, and again each time they change.
 */
export function referenceDocuments(app: FastifyInstance, { catalog, config, access }: RouteContext, limiter: RateLimiter<'ref'>, terms?: PublishedTerms): ReferenceDocuments {
  const baseUrl = config.publicBaseUrl;
  const json = 'application/json; charset=utf-8';
  // app.swagger() is generated once and cached by @fastify/swagger; the terms are put in a copy (payment-terms.ts).
  const openapiDoc = () => withPaymentTerms(app.swagger() as unknown as Record<string, unknown>, terms?.current());
  // The YAML form as @fastify/swagger makes it (`strict: false`), from the same object.
  const openapiYaml = () => (terms?.current() ? yamlText(openapiDoc(), { strict: false }) : app.swagger({ yaml: true }));
  const docs = {
    // Served before the terms are known (the facilitator not asked yet, or unreachable), it asks for them.
    openapi: new PrebuiltDocument(json, () => JSON.stringify(openapiDoc()), terms && (() => void (terms.current() ?? terms.want()))),
    openapiYaml: new PrebuiltDocument('application/x-yaml', openapiYaml),
    llmsTxt: new PrebuiltDocument('text/plain; charset=utf-8', () => llmsTxt(catalog.entries, baseUrl, access)),
    agentCard: new PrebuiltDocument(json, () => JSON.stringify(agentCard(catalog.entries, baseUrl, access))),
  };
  const limit = referenceLimit(config.limits.freePerMinute);
  let published: () => void = () => {};
  const termsPublished = new Promise<void>((resolve) => (published = resolve));
  terms?.onChange(() => {
    // Both forms made again (the YAML one only if it was made: it is left to its first request).
    void Promise.all([docs.openapi.rebuild(() => JSON.stringify(openapiDoc())), docs.openapiYaml.rebuild(openapiYaml)]).then(published);
  });
  return {
    ...docs,
    // Asks the facilitator again while it has not answered (each ask ends in success or failure: no timer).
    termsPublished: async () => {
      if (!terms) return termsPublished;
      while (!(await terms.want()));
      return termsPublished;
    },
    // The YAML form is left to its first request (/docs/yaml; Swagger UI loads /docs/json): making it costs start-up ~170 ms.
    build: async () => void (await Promise.all([docs.openapi, docs.llmsTxt, docs.agentCard].map((d) => d.build()))),
    limited: (req, reply, done) => afterLimit(limiter.check(clientBucketName('ref', req.ip, req.raw.socket), limit, reply), req, reply, notAnswered, done),
  };
}

/** The reference paths at the root: /openapi.json, /llms.txt, /.well-known/agent.json. */
export function registerReferenceRoutes(app: FastifyInstance, documents: ReferenceDocuments): void {
  const route = (path: string, doc: PrebuiltDocument) =>
    app.get(path, { schema: { hide: true }, onRequest: documents.limited }, (req, reply) => doc.send(req, reply));
  route('/openapi.json', documents.openapi);
  route('/llms.txt', documents.llmsTxt);
  route('/.well-known/agent.json', documents.agentCard);
}
