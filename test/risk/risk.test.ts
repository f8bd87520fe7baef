import { describe, expect, it } from 'vitest';
import { CHAINS } from '../../src/risk/chains.ts';
import { upstreamFailures } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, useFakeUpstreamApp } from '../helpers.ts';

const EVM = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';
const RAY = '4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R';
const evmSample = () => recorded('goplus__token_security_evm.json');
const evmToken = () => evmSample().result[EVM];
const solanaEnvelope = () => ({ code: 1, message: 'OK', result: { [RAY]: recorded('goplus__solana_token_security.json') } });

const t = useFakeUpstreamApp((url) => ({ GOPLUS_BASE_URL: url, RISK_RATE_LIMIT: '100000' }));
const { fake, get } = t;

describe('GET /risk/v1/token-risk on an EVM chain', () => {
  it('scores the recorded GoPlus sample and returns flags, raw and provenance', async () => {
    fake.route('GET /api/v1/token_security/8453', { body: evmSample() });
    const res = await get(`/risk/v1/token-risk?chain=base&address=${EVM.toUpperCase().replace('0X', '0x')}`);
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();

    // The provider was asked for the normalised (lower-case) address on chain id 8453.
    expect(fake.calls('/api/v1/token_security/8453')[0]!.query.get('contract_addresses')).toBe(EVM);
    expect(data.chain).toEqual({ name: 'base', id: 8453 });
    expect(data.address).toBe(EVM);

    // Weighted average: (10 honeypot + 3 same-creator + 4 mintable + 6 balance change + 4 hidden owner
    // + 5 × 0.6106 top-10 share) / 85 = 35.36 → 35; is_honeypot is critical, so the floor 80 applies.
    expect(data.score).toBe(80);
    expect(data.score_breakdown.weight_total).toBe(85);
    expect(data.score_breakdown.critical_floor_applied).toBe(true);
    const sum = data.score_breakdown.signals.reduce((a: number, s: { contribution: number }) => a + s.contribution, 0);
    expect(sum).toBeCloseTo(35.36, 1);
    const top10 = data.score_breakdown.signals.find((s: { signal: string }) => s.signal === 'top10_holders_share');
    expect(top10).toEqual({ signal: 'top10_holders_share', source: 'provider', group: 'holder_concentration', value: 0.566376, weight: 5, risk: 0.6106, contribution: 3.59 });

    expect(data.flags.honeypot).toMatchObject({ is_honeypot: true, cannot_sell_all: false, honeypot_with_same_creator: true });
    expect(data.flags.authority).toMatchObject({ mintable: true, owner_can_change_balance: true, hidden_owner: true, closed_source: false });
    expect(data.flags.holder_concentration).toEqual({ holder_count: 40, top10_holders_share: 0.566376, creator_share: 0, owner_share: 0 });
    expect(data.flags.lp_concentration).toEqual({ in_dex: true, lp_holder_count: 2, lp_unlocked_share: 0 });
    expect(data.flags.tax).toEqual({ buy_tax: 0, sell_tax: 0, tax_modifiable: false, personal_tax_modifiable: false });
    expect(data.flags.trust_list).toEqual({ trusted: null });
    expect(data.coverage).toEqual({ present: 28, total: 29, ratio: 0.9655 });
    expect(data.score_breakdown).toMatchObject({ not_scored: [], closed_source_floor_applied: false });
    expect(data.checks_not_made).toEqual([]);
    expect(data.malicious_addresses).toBeNull();
    expect(data.token).toEqual({ name: 'KOKODI', symbol: 'KOKO' });
    expect(data.raw).toEqual(evmToken());

    // The chain's RPC (rpc:base) points at a closed port here: the provider's part is still served, and the
    // chain's section is null with the failure named, in data and in meta.sources (test/risk/risk-onchain.test.ts
    // has the chain answering).
    expect(data.onchain).toBeNull();
    expect(data.onchain_unavailable).toBe('rpc:base could not be reached (ECONNREFUSED)');
    expect(data.disagreements).toEqual([]);
    expect(meta.sources).toHaveLength(2);
    expect(meta.sources[0]).toMatchObject({ provider: 'goplus', cached: false });
    expect(meta.sources[1]).toMatchObject({ provider: 'rpc:base', cached: false, error: 'rpc:base could not be reached (ECONNREFUSED)' });
    expect(Date.parse(meta.timestamp)).not.toBeNaN();
    expect(meta.disclaimer).toMatch(/not financial advice/i);
    expect(JSON.stringify(data)).not.toMatch(/"(safe|unsafe)"/i);
  });

  it('leaves absent fields null and scores only the signals given', async () => {
    const partial = evmSample();
    for (const k of ['is_honeypot', 'cannot_sell_all', 'holders', 'lp_holders', 'buy_tax', 'sell_tax']) delete partial.result[EVM][k];
    fake.route('GET /api/v1/token_security/1', { body: partial });
    const { data } = (await get(`/risk/v1/token-risk?chain=ethereum&address=${EVM}`)).json();
    expect(data.flags.honeypot.is_honeypot).toBeNull();
    expect(data.flags.holder_concentration.top10_holders_share).toBeNull();
    expect(data.flags.lp_concentration.lp_unlocked_share).toBeNull();
    expect(data.flags.tax.buy_tax).toBeNull();
    // (3 + 4 + 6 + 4) over 85 − 31 = 54 of weight; no critical signal fired. Without is_honeypot, and with the chain
    // unreachable, whether the token can be sold is unknown: it counts at risk 0.5 over weight 10 (17 + 5 of 64 → 34)
    // and the score is at least 50, not a low 31.
    expect(data.score_breakdown.weight_total).toBe(64);
    expect(data.score_breakdown.unknown).toEqual([expect.objectContaining({ signal: 'sellable', weight: 10, risk: 0.5, contribution: 7.81 })]);
    expect(data.score).toBe(50);
    expect(data.score_breakdown.unknown_sell_floor_applied).toBe(true);
    expect(data.score_breakdown.critical_floor_applied).toBe(false);
    expect(data.data_gaps).toContainEqual({ signal: 'is_honeypot', reason: 'GoPlus gave no value; the chain: rpc:ethereum could not be reached (ECONNREFUSED)' });
    expect(data.coverage).toMatchObject({ present: 22, total: 29 });
  });

  it('scores a token with every signal clean as 0', async () => {
    const clean = evmSample();
    const token = clean.result[EVM];
    for (const k of Object.keys(token)) if (token[k] === '1') token[k] = '0';
    token.is_open_source = '1';
    token.holders = [];
    fake.route('GET /api/v1/token_security/1', { body: clean });
    const { data } = (await get(`/risk/v1/token-risk?chain=1&address=${EVM}`)).json();
    expect(data.score).toBe(0);
  });

  it('answers an unknown token with a null score, null flags, zero coverage and a note', async () => {
    fake.route('GET /api/v1/token_security/56', { body: recorded('goplus__empty_result.json') });
    const res = await get(`/risk/v1/token-risk?chain=bsc&address=${EVM}`);
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(data.score).toBeNull();
    expect(data.coverage).toEqual({ present: 0, total: 29, ratio: 0 });
    for (const group of Object.values(data.flags) as Record<string, unknown>[]) {
      for (const v of Object.values(group)) expect(v).toBeNull();
    }
    expect(data.raw).toBeNull();
    expect(data.note).toMatch(/no data/);
  });
});

describe('GET /risk/v1/token-risk on Solana', () => {
  it('scores the recorded Solana sample', async () => {
    fake.route('GET /api/v1/solana/token_security', { body: solanaEnvelope() });
    const res = await get(`/risk/v1/token-risk?chain=SOLANA&address=${RAY}`);
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(fake.calls('/api/v1/solana/token_security')[0]!.query.get('contract_addresses')).toBe(RAY);
    expect(data.chain).toEqual({ name: 'solana', id: null });
    expect(data.address).toBe(RAY);
    expect(data.flags.honeypot).toEqual({ non_transferable: false, default_account_frozen: false });
    expect(data.flags.authority).toMatchObject({ mintable: false, freezable: false, metadata_mutable: true, transfer_hook: false, malicious_authority: false });
    expect(data.flags.holder_concentration).toEqual({ holder_count: 250721, top10_holders_share: 0.5332 });
    expect(data.flags.lp_concentration).toEqual({ in_dex: true, lp_unlocked_share: 0.6339 });
    expect(data.flags.tax).toEqual({
      transfer_fee: 0,
      transfer_fee_current: 0,
      transfer_fee_scheduled: null,
      transfer_fee_scheduled_epoch: null,
      transfer_fee_upgradable: false,
    });
    expect(data.flags.trust_list).toEqual({ trusted: true });
    // (1 metadata + 5 × 0.5553 + 4 × 0.6339) / 67 = 9.4 % → 9. The 67 includes default_account_frozen (weight 8),
    // clean here (default_account_state "1"); before it was read (issue 9) the same sample weighed 6.31 of 59 → 11.
    // malicious_authority is present (no address is marked) but only a hit is scored.
    expect(data.score_breakdown.weight_total).toBe(67);
    expect(data.score).toBe(9);
    expect(data.score_breakdown.not_scored).toEqual([]);
    expect(data.coverage).toEqual({ present: 18, total: 18, ratio: 1 });
    expect(data.checks_not_made).toEqual([]);
    expect(data.malicious_addresses).toEqual([]);
    expect(data.token).toEqual({ name: 'Raydium', symbol: 'RAY' });
  });
});

describe('upstream failures answer 502 naming the provider', () => {
  const url = `/risk/v1/token-risk?chain=ethereum&address=${EVM}`;

  it('provider code 4029 (rate limited, HTTP 200) is a 502 naming goplus (interface A has no 503), with Retry-After, not our 429, and is not cached', async () => {
    fake.route('GET /api/v1/token_security/1', { body: recorded('goplus__rate_limited.json') });
    const res = await get(url);
    expect(res.statusCode).toBe(502);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.json()).toEqual({ error: 'goplus is rate limiting this server (code 4029 (too many requests))', source: 'goplus' });
    fake.route('GET /api/v1/token_security/1', { body: evmSample() });
    expect((await get(url)).statusCode).toBe(200);
    expect(fake.calls('/api/v1/token_security/1')).toHaveLength(2);
  });

  it('an open circuit (GoPlus paused after repeated failures) is a 502 naming goplus (interface A has no 503), with the breaker\'s Retry-After, and no call', async () => {
    const paused = await makeApp({ GOPLUS_BASE_URL: fake.url, RISK_RATE_LIMIT: '100000', BREAKER_FAILURES: '2', BREAKER_COOLDOWN_MS: '60000' });
    try {
      fake.route('GET /api/v1/token_security/1', { status: 500, body: 'oops' });
      const failing = [await paused.app.inject({ url }), await paused.app.inject({ url })];
      expect(failing.map((r) => r.statusCode)).toEqual([502, 502]);
      expect(fake.calls('/api/v1/token_security/1')).toHaveLength(2);
      const res = await paused.app.inject({ url });
      expect(res.statusCode).toBe(502);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(50);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(res.json()).toEqual({ error: `goplus is failing (2 failures in a row, last: goplus answered HTTP 500); calls are paused, retry in ${retryAfter} s`, source: 'goplus' });
      // Failed fast: the paused provider was not called again.
      expect(fake.calls('/api/v1/token_security/1')).toHaveLength(2);
    } finally {
      await paused.app.close();
    }
  });

  it.each(upstreamFailures('goplus', { malformed: '{"code":1,"result":{', timeoutBody: evmSample() }))('%s', async (_name, reply, error) => {
    fake.route('GET /api/v1/token_security/1', reply);
    const res = await get(url);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error, source: 'goplus' });
  });

  it('HTTP 500 is not retried', async () => {
    fake.route('GET /api/v1/token_security/1', { status: 500, body: 'oops' });
    await get(url);
    expect(fake.calls('/api/v1/token_security/1')).toHaveLength(1);
  });

  it('HTTP 503 is retried once, then fails', async () => {
    fake.route('GET /api/v1/token_security/1', { status: 503, body: 'busy' });
    const res = await get(url);
    expect(res.statusCode).toBe(502);
    expect(fake.calls('/api/v1/token_security/1')).toHaveLength(2);
  });

  it('a connection reset is retried once and the retry succeeds', async () => {
    let n = 0;
    fake.route('GET /api/v1/token_security/1', () => (n++ === 0 ? { reset: true } : { body: evmSample() }));
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    expect(fake.calls('/api/v1/token_security/1')).toHaveLength(2);
  });

  it('a body that is JSON but not the documented shape', async () => {
    fake.route('GET /api/v1/token_security/1', { body: { code: '1', result: [] } });
    const res = await get(url);
    expect(res.statusCode).toBe(502);
    expect(res.json().source).toBe('goplus');
    expect(res.json().error).toMatch(/unexpected response shape at code/);
  });

  it('a body larger than the bound', async () => {
    const big = await makeApp({ GOPLUS_BASE_URL: fake.url, UPSTREAM_MAX_BODY_BYTES: '2048' });
    fake.route('GET /api/v1/token_security/1', { body: evmSample() });
    const res = await big.app.inject({ url });
    await big.app.close();
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'goplus response exceeded 2048 bytes', source: 'goplus' });
  });

  it('a provider that cannot be reached', async () => {
    const down = await makeApp({ GOPLUS_BASE_URL: 'http://127.0.0.1:9' });
    const res = await down.app.inject({ url });
    await down.app.close();
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'goplus could not be reached (ECONNREFUSED)', source: 'goplus' });
  });
});

describe('chain and address parameters', () => {
  it('every chain name and numeric id reaches the right provider path', async () => {
    fake.route('* /api/v1/solana/token_security', { body: recorded('goplus__empty_result.json') });
    for (const c of CHAINS) if (c.id !== null) fake.route(`GET /api/v1/token_security/${c.id}`, { body: recorded('goplus__empty_result.json') });
    for (const c of CHAINS) {
      const inputs = c.id === null ? [c.name, c.name.toUpperCase()] : [c.name, c.name.toUpperCase(), String(c.id)];
      for (const chain of inputs) {
        fake.reset();
        fake.route(c.id === null ? 'GET /api/v1/solana/token_security' : `GET /api/v1/token_security/${c.id}`, { body: recorded('goplus__empty_result.json') });
        t.app.services.cache.clear();
        const res = await get(`/risk/v1/token-risk?chain=${chain}&address=${c.id === null ? RAY : EVM}`);
        expect(res.statusCode, chain).toBe(200);
        expect(res.json().data.chain).toEqual({ name: c.name, id: c.id });
        expect(fake.requests.map((r) => r.path)).toEqual([c.id === null ? '/api/v1/solana/token_security' : `/api/v1/token_security/${c.id}`]);
      }
    }
    expect(CHAINS.map((c) => c.id)).toEqual([1, 56, 8453, 137, 42161, 10, 43114, 250, 324, 59144, 534352, null]);
  });

  it.each([
    ['missing chain', `address=${EVM}`, /query parameter 'chain' is required: one of ethereum, bsc, base.*solana.*534352/],
    ['missing address', 'chain=base', /query parameter 'address' is required: an EVM contract address/],
    ['unknown chain', `chain=tron&address=${EVM}`, /query parameter 'chain' must be one of ethereum, bsc/],
    ['unsupported chain id', `chain=5&address=${EVM}`, /query parameter 'chain' must be one of/],
    ['short EVM address', 'chain=base&address=0x1234', /query parameter 'address' must be an EVM contract address/],
    ['non-hex EVM address', `chain=base&address=0x${'g'.repeat(40)}`, /query parameter 'address' must be/],
    ['Solana mint on an EVM chain', `chain=base&address=${RAY}`, /'address' must be an EVM address .* on chain 'base'/],
    ['EVM address on Solana', `chain=solana&address=${EVM}`, /'address' must be a Solana mint/],
    ['base58 with an invalid letter', `chain=solana&address=${'0'.repeat(40)}`, /query parameter 'address' must be/],
  ])('%s → 400 naming the parameter', async (_name, qs, message) => {
    const res = await get(`/risk/v1/token-risk?${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
    expect(Object.keys(res.json())).toEqual(['error']);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('cache and coalescing', () => {
  it('100 concurrent identical requests cause exactly one upstream call', async () => {
    fake.route('GET /api/v1/token_security/8453', { delayMs: 150, body: evmSample() });
    const all = await Promise.all(Array.from({ length: 100 }, () => get(`/risk/v1/token-risk?chain=base&address=${EVM}`)));
    expect(all.every((r) => r.statusCode === 200)).toBe(true);
    expect(new Set(all.map((r) => r.json().data.score))).toEqual(new Set([80]));
    expect(fake.calls('/api/v1/token_security/8453')).toHaveLength(1);
  });

  it('a repeat within the TTL is served from the cache and says so', async () => {
    fake.route('GET /api/v1/token_security/8453', { body: evmSample() });
    await get(`/risk/v1/token-risk?chain=base&address=${EVM}`);
    const again = (await get(`/risk/v1/token-risk?chain=8453&address=${EVM.toUpperCase().replace('0X', '0x')}`)).json();
    expect(again.meta.sources[0].cached).toBe(true);
    expect(again.meta.sources[0].age_s).toBeGreaterThanOrEqual(0);
    expect(fake.calls('/api/v1/token_security/8453')).toHaveLength(1);
  });
});

describe('health, status, request ids', () => {
  it('GET /risk/health', async () => {
    const res = await get('/risk/health');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'ok', version: '1.0.0' });
    expect(typeof res.json().data.uptime_s).toBe('number');
  });

  it('GET /risk/v1/status lists endpoints, parameters, chains, provider, limit and disclaimer', async () => {
    const { data } = (await get('/risk/v1/status')).json();
    expect(data.version).toBe('1.0.0');
    expect(data.endpoints.map((e: { path: string }) => e.path)).toEqual(['/risk/health', '/risk/v1/status', '/risk/v1/token-risk']);
    const tokenRisk = data.endpoints[2];
    expect(tokenRisk.parameters.map((p: { name: string; required: boolean }) => [p.name, p.required])).toEqual([
      ['address', true],
      ['chain', true],
    ]);
    expect(data.chains).toHaveLength(12);
    expect(data.chains).toContainEqual({ name: 'scroll', id: 534352, family: 'evm' });
    expect(data.provider).toMatchObject({ name: 'GoPlus Security', base_url: fake.url });
    expect(data.rate_limit).toMatchObject({ max: 100000, window_s: 60 });
    expect(data.disclaimer).toMatch(/not financial advice/i);
  });

  it('echoes a caller x-request-id and makes one otherwise; logs carry it', async () => {
    const res = await get('/risk/health', { 'x-request-id': 'abc-123' });
    expect(res.headers['x-request-id']).toBe('abc-123');
    const other = await get('/risk/health');
    expect(other.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(t.logs.some((l) => JSON.parse(l).reqId === 'abc-123')).toBe(true);
  });

  it('unknown routes answer a JSON 404', async () => {
    const res = await get('/risk/v1/nope');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: expect.stringMatching(/^no route for GET \/risk\/v1\/nope[.;].* Every route is listed at \/docs\.$/) });
  });
});
