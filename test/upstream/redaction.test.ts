// Configured URLs carry secrets (a provider key in an RPC path, in a query, a user:pass@ login): no
// page shows more than their origin, and no log line carries the secret parts — while the login is
// still used, as Basic auth, to reach the upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrub, secretParts, urlOrigin } from '../../src/upstream/redact-url.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { feeHistoryWithMedianColumn } from '../fakes/fee-history.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

const SECRETS = ['PATHKEY0123456789', 'QUERYKEY9876543210', 'rpcuser', 'rpcpass42', 'GOPLUSKEY555', 'FACILITATORTOKEN77'];

describe('configured URLs with secrets', () => {
  let rpc: FakeUpstream;
  let t: TestApp;
  const allText = async (url: string) => (await t.app.inject({ url, headers: TEST_KEY })).body;

  beforeAll(async () => {
    rpc = await new FakeUpstream().start();
    const port = new URL(rpc.url).port;
    t = await makeApp({
      ...TEST_KEY_ENV,
      RPC_URL_ETHEREUM: `http://rpcuser:rpcpass42@127.0.0.1:${port}/v2/PATHKEY0123456789?apikey=QUERYKEY9876543210`,
      // Unreachable, with secrets in path and query: failures are logged.
      RPC_URL_BASE: 'http://127.0.0.1:9/v2/PATHKEY0123456789?apikey=QUERYKEY9876543210',
      GOPLUS_BASE_URL: 'http://127.0.0.1:9/GOPLUSKEY555',
      X402_PAY_TO: '0x1111111111111111111111111111111111111111',
      X402_FACILITATOR: 'http://127.0.0.1:9/x402?token=FACILITATORTOKEN77',
    });
  });
  afterAll(async () => {
    await t.app.close();
    await rpc.stop();
  });

  it('/v1/status and /risk/v1/status show only the origin', async () => {
    const status = (await t.app.inject({ url: '/v1/status' })).json();
    const ethereum = status.data.upstreams.find((u: { provider: string }) => u.provider === 'rpc:ethereum');
    expect(ethereum.base_url).toBe(`http://127.0.0.1:${new URL(rpc.url).port}`);
    const risk = (await t.app.inject({ url: '/risk/v1/status' })).json();
    expect(risk.data.provider.base_url).toBe('http://127.0.0.1:9');
    for (const page of ['/v1/status', '/risk/v1/status', '/.well-known/agent.json', '/llms.txt', '/openapi.json']) {
      const text = await allText(page);
      for (const secret of SECRETS) expect(text, `${page} shows ${secret}`).not.toContain(secret);
    }
  });

  it('the login is sent to the upstream as Basic auth (the pool is per origin, which has none)', async () => {
    rpc.route('POST /v2/PATHKEY0123456789', { body: feeHistoryWithMedianColumn() });
    const res = await t.app.inject({ url: '/v1/gas' });
    expect(res.statusCode).toBe(200);
    expect(rpc.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from('rpcuser:rpcpass42').toString('base64')}`);
    expect(rpc.requests[0]!.query.get('apikey')).toBe('QUERYKEY9876543210');
  });

  it('failures of those upstreams are logged without the secrets', async () => {
    const failures = [
      await t.app.inject({ url: '/v1/chain-balance?chain=base&address=0x1111111111111111111111111111111111111111', headers: TEST_KEY }),
      await t.app.inject({ url: '/risk/v1/token-risk?chain=base&address=0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' }),
      await t.app.inject({ url: '/v1/market-clock' }),
    ];
    expect(failures.map((r) => r.statusCode)).toEqual([502, 502, 503]);
    const logs = t.logs.join('');
    expect(logs).toContain('rpc:base');
    for (const secret of SECRETS) expect(logs, `logs show ${secret}`).not.toContain(secret);
  });

  it('the logger itself scrubs a configured URL from messages, fields and errors (as a library error would carry it)', () => {
    const before = t.logs.length;
    const cause = new Error('connect ECONNREFUSED http://rpcuser:rpcpass42@127.0.0.1/v2/PATHKEY0123456789?apikey=QUERYKEY9876543210');
    t.app.log.error({ err: new Error('HTTP request failed. URL: http://127.0.0.1:9/GOPLUSKEY555', { cause }), url: 'http://127.0.0.1:9/x402?token=FACILITATORTOKEN77' }, 'calling http://127.0.0.1:9/GOPLUSKEY555');
    const line = t.logs.slice(before).join('');
    expect(line).toContain('[redacted]');
    expect(line).toContain('ECONNREFUSED');
    for (const secret of SECRETS) expect(line, `log line shows ${secret}`).not.toContain(secret);
  });
});

describe('redaction helpers', () => {
  it('urlOrigin keeps scheme, host and port only', () => {
    expect(urlOrigin('https://u:p@eth-mainnet.g.alchemy.com:8443/v2/KEY?x=1#f')).toBe('https://eth-mainnet.g.alchemy.com:8443');
    expect(urlOrigin('not a url')).toBe('[invalid URL]');
  });

  it('secretParts finds logins, paths and queries, as written and as URL spells them', () => {
    const parts = secretParts(['https://user1:p%40ss@h.example/v2/KEY?q=1', 'https://plain.example', 'https://h2.example/']);
    expect(parts).toEqual(expect.arrayContaining(['/v2/KEY?q=1', 'user1', 'p%40ss']));
    expect(scrub('GET https://h.example/v2/KEY?q=1 failed for user1', parts)).toBe('GET https://h.example[redacted] failed for [redacted]');
  });
});
