// The reference documents (src/reference/reference-routes.ts, src/reference/prebuilt.ts): made once as bytes and
// served as those bytes, with a strong ETag per encoding, 304 to a matching If-None-Match, gzip or brotli by
// Accept-Encoding (Vary: Accept-Encoding), and a rate limit per client IP.
import { promisify } from 'node:util';
import { brotliDecompress, gunzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { noneMatch, PrebuiltDocument } from '../../src/reference/prebuilt.ts';
import { makeApp, type TestApp } from '../helpers.ts';

const unzip = { gzip: promisify(gunzip), br: promisify(brotliDecompress) };

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ FREE_RATE_LIMIT: '100000' });
  await t.app.reference.build();
});
afterAll(async () => {
  await t.app.close();
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ url, headers });

const DOCUMENTS = [
  ['/openapi.json', 'application/json; charset=utf-8'],
  ['/docs/json', 'application/json; charset=utf-8'],
  ['/docs/yaml', 'application/x-yaml'],
  ['/llms.txt', 'text/plain; charset=utf-8'],
  ['/.well-known/agent.json', 'application/json; charset=utf-8'],
] as const;

describe('the reference documents', () => {
  it('/openapi.json is the OpenAPI document as it was sent before, made once: no request builds or serialises it again', async () => {
    const first = await get('/openapi.json');
    expect(first.body).toBe(JSON.stringify(t.app.swagger()));
    const swagger = vi.spyOn(t.app, 'swagger');
    for (let i = 0; i < 5; i++) expect((await get('/openapi.json')).statusCode).toBe(200);
    expect((await get('/docs/json')).body).toBe(first.body);
    expect(swagger).not.toHaveBeenCalled();
    swagger.mockRestore();
    // Every answer writes the same bytes (a queued answer holds a reference to them, not a copy).
    const doc = t.app.reference.openapi;
    expect(doc.representation(undefined).body).toBe(doc.representation(undefined).body);
    expect(doc.representation('br').body).toBe(doc.representation('gzip;q=0.5, br').body);
  });

  it.each(DOCUMENTS)('%s: a strong ETag, Vary: Accept-Encoding, and 304 to a matching If-None-Match', async (url, type) => {
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers.vary).toBe('accept-encoding');
    const etag = String(res.headers.etag);
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get(url, { 'if-none-match': ifNoneMatch });
      expect(again.statusCode, ifNoneMatch).toBe(304);
      expect(again.rawPayload.length).toBe(0);
      expect([again.headers.etag, again.headers.vary]).toEqual([etag, 'accept-encoding']);
    }
    expect((await get(url, { 'if-none-match': '"other"' })).statusCode).toBe(200);
  });

  it.each(DOCUMENTS)('%s: gzip or brotli by Accept-Encoding, each with its own ETag, the same document once decoded', async (url) => {
    const plain = await get(url);
    for (const [accept, encoding] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['gzip, deflate, br', 'br'],
      ['br;q=0.1, gzip;q=0.9', 'gzip'],
    ] as const) {
      const res = await get(url, { 'accept-encoding': accept });
      expect(res.headers['content-encoding'], accept).toBe(encoding);
      expect(res.headers.vary).toBe('accept-encoding');
      expect(res.headers.etag).toBe(String(plain.headers.etag).replace(/"$/, `-${encoding}"`));
      expect(res.rawPayload.length).toBeLessThan(plain.rawPayload.length);
      expect((await unzip[encoding](res.rawPayload)).equals(plain.rawPayload)).toBe(true);
      // The compressed form's ETag gets its 304; the plain one's does not match it.
      expect((await get(url, { 'accept-encoding': accept, 'if-none-match': String(res.headers.etag) })).statusCode).toBe(304);
      expect((await get(url, { 'accept-encoding': accept, 'if-none-match': String(plain.headers.etag) })).statusCode).toBe(200);
    }
    for (const accept of ['identity', 'deflate', 'gzip;q=0, br;q=0']) {
      const res = await get(url, { 'accept-encoding': accept });
      expect(res.headers['content-encoding'], accept).toBeUndefined();
      expect(res.rawPayload.equals(plain.rawPayload)).toBe(true);
    }
  });

  it('HEAD answers the headers of GET without the body', async () => {
    const head = await t.app.inject({ method: 'HEAD', url: '/openapi.json', headers: { 'accept-encoding': 'gzip' } });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.rawPayload.length).toBe(0);
  });

  it('count per client IP in the reference pages\' bucket (FREE_RATE_LIMIT), answering 429 with Retry-After and the error body', async () => {
    const limited = await makeApp({ FREE_RATE_LIMIT: '3' });
    try {
      const status = (url: string, remoteAddress = '10.1.1.1') => limited.app.inject({ url, remoteAddress });
      expect([(await status('/openapi.json')).statusCode, (await status('/docs/json')).statusCode, (await status('/llms.txt')).statusCode]).toEqual([200, 200, 200]);
      const refused = await status('/.well-known/agent.json');
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(refused.json()).toEqual({ error: expect.stringMatching(/^rate limit exceeded: 3 requests per minute per client on the reference pages; retry in \d+ s$/) });
      expect((await status('/docs/yaml')).statusCode).toBe(429);
      expect((await status('/openapi.json', '10.1.1.2')).statusCode).toBe(200);
      // Swagger UI's page itself is not limited.
      expect((await status('/docs')).statusCode).toBe(200);
    } finally {
      await limited.app.close();
    }
  });
});

describe('PrebuiltDocument', () => {
  it('makes its bytes once, whatever the number of requests', async () => {
    let made = 0;
    const doc = new PrebuiltDocument('text/plain', () => `document ${++made} `.repeat(200));
    for (let i = 0; i < 10; i++) doc.representation(i % 2 ? 'gzip' : undefined);
    await doc.build();
    for (let i = 0; i < 10; i++) doc.representation(i % 2 ? 'gzip' : 'br');
    expect(made).toBe(1);
    expect(doc.representation('gzip').encoding).toBe('gzip');
  });

  it('serves the plain bytes when compressing would not make them smaller', async () => {
    const doc = new PrebuiltDocument('text/plain', () => 'x');
    await doc.build();
    expect(doc.representation('br, gzip').encoding).toBeUndefined();
  });

  it('rebuild: the new bytes are served only with their compressed forms made, a new ETag each; a later rebuild wins; one not made yet waits for its first request', async () => {
    const doc = new PrebuiltDocument('text/plain', () => 'first '.repeat(200));
    await doc.build();
    const before = doc.representation('br');
    const rebuilt = doc.rebuild(() => 'second '.repeat(200));
    // Until the new forms are made, the old document is served whole.
    expect(doc.representation('br')).toBe(before);
    const last = doc.rebuild(() => 'third '.repeat(200));
    await Promise.all([rebuilt, last]);
    const br = doc.representation('br');
    expect(br.etag).not.toBe(before.etag);
    expect(String(await unzip.br(br.body))).toBe('third '.repeat(200));
    expect(String(doc.representation(undefined).body)).toBe('third '.repeat(200));
    let made = 0;
    const lazy = new PrebuiltDocument('text/plain', () => `lazy ${++made}`);
    await lazy.rebuild(() => `changed ${++made}`);
    expect(made).toBe(0);
    expect(String(lazy.representation(undefined).body)).toBe('changed 1');
  });

  it('compares If-None-Match weakly, as RFC 9110 says for it', () => {
    expect(noneMatch('"a"', '"a"')).toBe(true);
    expect(noneMatch('W/"a"', '"a"')).toBe(true);
    expect(noneMatch(' "b" , W/"a" ', '"a"')).toBe(true);
    expect(noneMatch('*', '"a"')).toBe(true);
    expect(noneMatch('"b"', '"a"')).toBe(false);
    expect(noneMatch(undefined, '"a"')).toBe(false);
  });
});
