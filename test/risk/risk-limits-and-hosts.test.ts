import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';

const EVM = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';
const fake = new FakeUpstream();
beforeAll(async () => {
  await fake.start();
  fake.route('GET /api/v1/token_security/8453', { body: recorded('goplus__token_security_evm.json') });
});
afterAll(() => fake.stop());

describe('rate limit on interface A', () => {
  it('a burst over RISK_RATE_LIMIT gets 429 with Retry-After and x-ratelimit-* headers', async () => {
    const { app } = await makeApp({ GOPLUS_BASE_URL: fake.url, RISK_RATE_LIMIT: '5' });
    const url = `/risk/v1/token-risk?chain=base&address=${EVM}`;
    const codes: number[] = [];
    for (let i = 0; i < 7; i++) codes.push((await app.inject({ url })).statusCode);
    expect(codes).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const res = await app.inject({ url });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ error: expect.stringMatching(/^rate limit exceeded: 5 requests per minute per client; retry in \d+ s$/) });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['x-ratelimit-limit']).toBe('5');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    // Another client (different IP) is not affected.
    expect((await app.inject({ url, remoteAddress: '10.0.0.2' })).statusCode).toBe(200);
    await app.close();
  });
});

describe('RISK_HOSTNAME', () => {
  it('serves interface A at the root of that host, and only there', async () => {
    const { app } = await makeApp({ GOPLUS_BASE_URL: fake.url, RISK_HOSTNAME: 'Risk.Example.com' });
    const onRiskHost = (url: string) => app.inject({ url, headers: { host: 'risk.example.com:8080' } });

    const root = await onRiskHost(`/v1/token-risk?chain=base&address=${EVM}`);
    expect(root.statusCode).toBe(200);
    expect(root.json().data.score).toBe(80);
    expect((await onRiskHost('/health')).json().data.service).toBe('marketgate token risk');
    expect((await onRiskHost('/v1/status')).json().data.name).toBe('marketgate token risk');
    // Its root is interface A's index, as /risk is on every host.
    expect((await onRiskHost('/')).json().name).toBe('marketgate token risk');
    expect((await app.inject({ url: '/', headers: { host: 'api.example.com' } })).json().name).toBe('marketgate');
    // The /risk prefix keeps working on that host too.
    expect((await onRiskHost('/risk/health')).statusCode).toBe(200);
    // On any other host the root is interface B, not A.
    const other = await app.inject({ url: `/v1/token-risk?chain=base&address=${EVM}`, headers: { host: 'api.example.com' } });
    expect(other.statusCode).toBe(404);
    expect((await app.inject({ url: '/risk/health', headers: { host: 'api.example.com' } })).statusCode).toBe(200);
    await app.close();
  });

  it('an absolute-form request line on that host reaches interface A too (it was rewritten to /riskhttp://…, a 404)', async () => {
    const { app } = await makeApp({ GOPLUS_BASE_URL: fake.url, RISK_HOSTNAME: 'risk.example.com' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    const ask = (target: string, host: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let got = '';
        socket.on('data', (d) => (got += d));
        socket.on('close', () => resolve(got));
        socket.on('error', () => resolve(got));
        socket.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      });
    const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    try {
      const root = await ask(`http://risk.example.com/v1/token-risk?chain=base&address=${EVM}`, 'risk.example.com');
      expect(root.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
      expect(bodyOf(root).data.score).toBe(80);
      expect(bodyOf(await ask('HTTP://RISK.EXAMPLE.COM:8080/v1/status', 'risk.example.com:8080')).data.name).toBe('marketgate token risk');
      expect(bodyOf(await ask('http://risk.example.com/risk/health', 'risk.example.com')).data.service).toBe('marketgate token risk');
      // Another host's absolute form is left as it is: interface B at the root.
      expect(bodyOf(await ask('http://api.example.com/v1/status', 'api.example.com')).data.name).toBe('marketgate market data');
    } finally {
      await app.close();
    }
  });
});

describe('errors never leak internals', () => {
  it('an unexpected exception is a plain 500 with no stack or message, logged with the request id', async () => {
    const { app, logs } = await makeApp({}, (a) => {
      a.get('/boom', async () => {
        throw new Error('secret internal detail at /srv/db.ts:42');
      });
    });
    const res = await app.inject({ url: '/boom', headers: { 'x-request-id': 'req-boom' } });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal error' });
    expect(res.body).not.toMatch(/secret|\.ts/);
    const line = logs.map((l) => JSON.parse(l)).find((l) => l.reqId === 'req-boom' && l.level === 50);
    expect(line?.err?.message).toMatch(/secret internal detail/);
    await app.close();
  });

  it('credentials in headers are redacted from logs', async () => {
    const { app, logs } = await makeApp({}, (a) => {
      a.get('/echo', async (req) => {
        req.log.info({ headers: req.headers }, 'headers seen');
        return { ok: true };
      });
    });
    await app.inject({ url: '/echo', headers: { 'x-api-key': 'mg_supersecretkey', 'payment-signature': 'c2lnbmF0dXJl' } });
    const all = logs.join('\n');
    expect(all).toContain('headers seen');
    expect(all).not.toContain('mg_supersecretkey');
    expect(all).not.toContain('c2lnbmF0dXJl');
    await app.close();
  });
});
