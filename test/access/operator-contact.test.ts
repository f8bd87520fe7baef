// OPERATOR_CONTACT: with x402 off, a paid route without a key is a 401 that says how to ask for a key (keys are
// free, made by the operator), and so do /v1/usage's 401, /v1/status, the agent card, llms.txt and OpenAPI. With
// x402 on, the 402 states the price as before (test/payments/x402.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { probeRoute } from '../fakes/probe-route.ts';
import { makeApp, type TestApp } from '../helpers.ts';

const DEFAULT = "API keys are free: ask this server's operator for one.";

describe.each([
  { contact: undefined, says: DEFAULT },
  { contact: 'keys@example.com', says: 'API keys are free: ask the operator at keys@example.com.' },
  { contact: 'https://example.com/api-keys', says: 'API keys are free: ask the operator at https://example.com/api-keys.' },
])('OPERATOR_CONTACT=$contact, x402 off', ({ contact, says }) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp(contact ? { OPERATOR_CONTACT: contact } : {}, undefined, [probeRoute]);
  });
  afterAll(() => t.app.close());

  it('a paid route without a key: 401 saying a key is required and how to ask for one', async () => {
    const res = await t.app.inject({ url: '/v1/test-probe' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: `an API key is required (x-api-key header); x402 payments are not configured on this server. ${says}` });
  });

  it('/v1/usage without a key: 401 saying how to ask for one', async () => {
    const res = await t.app.inject({ url: '/v1/usage' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: `an API key is required (x-api-key header). ${says}` });
  });

  it('/v1/status, the agent card, llms.txt and OpenAPI say it too', async () => {
    const status = (await t.app.inject({ url: '/v1/status' })).json();
    expect(status.data.access.api_key).toEqual({ header: 'x-api-key', how_to_get: says, contact: contact ?? null });
    const card = (await t.app.inject({ url: '/.well-known/agent.json' })).json();
    expect(card.securitySchemes.apiKey.description).toBe(says);
    const llms = (await t.app.inject({ url: '/llms.txt' })).body;
    expect(llms).toContain(`Paid endpoints accept an API key in the x-api-key header (no payment is taken when a key is sent). ${says}`);
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(doc.paths['/v1/price'].get.responses['401'].description).toMatch(new RegExp(`\\. ${says.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`));
    expect(doc.paths['/v1/usage'].get.responses['401'].description).toContain(says);
    expect(doc.components.securitySchemes.ApiKeyAuth.description).toBe(`Sent in the x-api-key header. ${says}`);
    expect(doc.info.description).toContain(says);
  });
});

describe('OPERATOR_CONTACT is checked at start-up', () => {
  it.each(['keys at example', 'ftp://example.com/keys', 'mailto'])('%s stops start-up naming it', (value) => {
    expect(() => loadConfig({ OPERATOR_CONTACT: value })).toThrow(
      `OPERATOR_CONTACT=${JSON.stringify(value)} is invalid: expected an email address (keys@example.com) or an http(s) URL (https://example.com/api-keys)`,
    );
  });
});
