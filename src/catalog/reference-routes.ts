// The reference paths at the root: /openapi.json, /llms.txt, /.well-known/agent.json.
// All generated from the catalog on first request (routes are final by then) and kept.
import type { FastifyInstance } from 'fastify';
import { agentCard } from './agent-card.ts';
import type { RouteContext } from './context.ts';
import { llmsTxt } from './llms-txt.ts';

export function registerReferenceRoutes(app: FastifyInstance, { catalog, config, access }: RouteContext): void {
  const baseUrl = config.publicBaseUrl;
  let text: string | undefined;
  let card: string | undefined;
  const hidden = { schema: { hide: true } };

  app.get('/openapi.json', hidden, async () => app.swagger());
  app.get('/llms.txt', hidden, async (_req, reply) => {
    text ??= llmsTxt(catalog.entries, baseUrl, access);
    return reply.type('text/plain; charset=utf-8').send(text);
  });
  app.get('/.well-known/agent.json', hidden, async (_req, reply) => {
    card ??= JSON.stringify(agentCard(catalog.entries, baseUrl, access));
    return reply.type('application/json; charset=utf-8').send(card);
  });
}
