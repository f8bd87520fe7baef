// OpenAPI 3.0.3 for both interfaces, generated from the routes' zod schemas as they register,
// and Swagger UI on /docs. Register before any route so every route is collected.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { howToGetKey } from '../access/keys/key-contact.ts';
import type { Config } from '../config.ts';
import { INTERFACE_VERSION } from '../lib/version.ts';
import { SECURITY_HEADERS } from '../edge/edge.ts';
import { documentDefaults } from '../params/query.ts';
import { publishedSigningKey } from '../payments/core/signing-key.ts';
import { finishDocument } from './openapi-document.ts';
import type { ReferenceDocuments } from './reference-routes.ts';

export const OPENAPI_VERSION = '3.0.3';

export async function registerOpenApi(app: FastifyInstance, config: Config, documents: ReferenceDocuments): Promise<void> {
  const x = config.x402;
  const payment = x.active
    ? `x402 v2 ("exact" scheme): ${x.price} per call in the token ${x.asset?.address} on ${x.network}, paid to ${x.payTo}. ` +
      'Call without credentials to get 402 with the PAYMENT-REQUIRED header, then retry with PAYMENT-SIGNATURE (an x402 client such as @x402/fetch does this).'
    : `x402 v2 ("exact" scheme): ${x.price} per call. Not configured on this server (X402_PAY_TO unset): use an API key.`;

  await app.register(swagger, {
    openapi: {
      openapi: OPENAPI_VERSION,
      info: {
        title: 'marketgate',
        // Interface B's version; interface A's (1.0.0) is in its own status page and in x-interface-versions.
        version: INTERFACE_VERSION.market,
        'x-interface-versions': { 'token risk (/risk)': INTERFACE_VERSION.risk, 'market data (/v1)': INTERFACE_VERSION.market },
        description:
          'Token risk check (free, under /risk) and market-data API for crypto and US equities (at the root). ' +
          'Responses are `{ data, meta }`; errors are `{ error, source? }`. ' +
          (x.active
            ? `Paid operations accept an API key (x-api-key) or an x402 payment (${x.price} per call).`
            : `Paid operations need an API key (x-api-key): x402 payments are not configured on this server.`) +
          ` ${howToGetKey(config.operatorContact)}`,
        // No licence has been granted for the API or its data: all rights reserved (the data itself comes from the named providers, under their terms).
        license: { name: 'Proprietary: all rights reserved' },
        // What agents read first (x402scan, @agentcash/discovery): how to pay, in a few lines.
        'x-guidance': guidance(config),
      },
      // Unset PUBLIC_BASE_URL: the server is the origin the document was fetched from, so /docs works behind any host or port.
      servers: [{ url: config.publicBaseUrlGiven ?? '/' }],
      tags: [
        { name: 'Token risk', description: 'Interface A: free token risk check' },
        { name: 'Reference', description: 'Catalog, health and status of interface B' },
      ],
      components: {
        securitySchemes: {
          ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key', description: `Sent in the x-api-key header. ${howToGetKey(config.operatorContact)}` },
          X402Payment: { type: 'apiKey', in: 'header', name: 'PAYMENT-SIGNATURE', description: payment },
        },
      },
      'x-x402': {
        enabled: x.active,
        price: x.price,
        network: x.network,
        asset: x.asset?.address ?? null,
        payTo: x.payTo ?? null,
        // The payment info's signer: the public key of the offers in every 402 and the receipt of every paid answer.
        receipts: x.active && x.signingKey ? publishedSigningKey(x.signingKey) : null,
      },
    } as never,
    // zod drops defaults of transformed parameters (boundedInt); put them back.
    transform: (args) => {
      const out = jsonSchemaTransform(args);
      documentDefaults(out.schema?.querystring);
      return out;
    },
    transformObject: (args) => finishDocument(jsonSchemaTransformObject(args)),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    // The UI's own CSP, with hashes of its inline scripts (helmet's strict API policy would block them). Two
    // changes to swagger-ui's: its JavaScript sets inline styles at run time (syntax highlighting), which
    // only 'unsafe-inline' allows, and harmlessly (styles run no code); and no upgrade-insecure-requests,
    // which would send the UI's own assets to https on a plain-http deployment.
    staticCSP: true,
    // The UI pages are HTML: helmet's full set of headers (the CSP is then swagger-ui's own, below). The
    // document the UI loads (/docs/json, or /docs/yaml) is the prebuilt one, limited like /openapi.json:
    // answered here, before the plugin's handler would serialise it again.
    uiHooks: {
      onRequest: (req, reply, done) => {
        const url = req.routeOptions.url;
        const doc = url === '/docs/json' ? documents.openapi : url === '/docs/yaml' ? documents.openapiYaml : undefined;
        if (doc === undefined) {
          reply.headers(SECURITY_HEADERS.html);
          return done();
        }
        documents.limited(req, reply, (err) => (err ? done(err) : void doc.send(req, reply)));
      },
    },
    transformStaticCSP: (header) =>
      header.replace(/\s*upgrade-insecure-requests;?/, '').replace(/style-src [^;]*;/, "style-src 'self' 'unsafe-inline';"),
  });
}

/** info["x-guidance"]: how an agent calls and pays, for discovery clients that read the document first. */
function guidance({ x402: x, operatorContact }: Config): string {
  const calls = 'Every operation is a GET with query parameters; success is JSON { data, meta }, failure { error, source? }. Operations with security: [] are free.';
  if (!x.active) {
    return `${calls}\nPaid operations (x-access: paid) need an API key in x-api-key: x402 pay-per-call (${x.price}) is not configured on this server. ${howToGetKey(operatorContact)}`;
  }
  return [
    calls,
    `Paid operations (x-payment-info: ${x.price} per call) accept an API key in x-api-key, or an x402 v2 payment:`,
    `1. Call without credentials: HTTP 402 with a PAYMENT-REQUIRED header (base64 JSON: ${x.price} in ${x.asset?.name} ${x.asset?.address} on ${x.network}, to ${x.payTo}).`,
    '2. Sign the "exact" payment and repeat the call with a PAYMENT-SIGNATURE header (an x402 client such as @x402/fetch does both steps).',
    '3. A success carries PAYMENT-RESPONSE (the settlement); a failed call (4xx/5xx) is never charged.',
    'Retries without paying twice: put an id in the payment-identifier extension (declared optional in every 402); resending the same PAYMENT-SIGNATURE returns the first answer again without a second settlement (same id, different payment: 409).',
    ...(x.signingKey
      ? ['Signed offers and receipts (x402 offer-receipt extension, JWS ES256K): every 402 carries signed offers; every paid answer a receipt in PAYMENT-RESPONSE whose JWS header binds the Content-Digest of the body. The public key: x-x402.receipts.']
      : []),
  ].join('\n');
}
