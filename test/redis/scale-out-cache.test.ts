// Several instances as one service, for the response cache: two app instances listening on ports share one
// real redis-server. Cold requests spread over both make one upstream call; a value one instance loaded is
// served by the other from Redis (L2), bigints included; a failure is stored nowhere; with Redis stopped or
// hung every request still answers promptly from each instance's own cache or the upstream, and the shared
// level works again once Redis is back.
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { L2_KEY_PREFIX } from '../../src/redis/cache-codec.ts';
import { FILLED_CHANNEL } from '../../src/redis/shared-cache.ts';
import { FakeUpstream, type FakeReply } from '../fakes/fake-upstream.ts';
import { parseScrape } from '../fakes/prometheus-text.ts';
import { recordedJsonRpc } from '../fakes/recorded-rpc.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV } from '../helpers.ts';
import { startRedis, type TestRedis } from '../servers/redis.ts';

const TICKER = '/api/v3/ticker/24hr';
const TOKEN = 'metrics-token-scale-out-cache-0123';
const REDIS_TIMEOUT_MS = 250;
/** Long enough that no upstream answer below is late on a busy 2-core machine. */
const DEADLINE_MS = 3000;
/** How long the fake exchange takes to answer, unless a test says otherwise. */
const UPSTREAM_DELAY_MS = 300;

let redis: TestRedis;
let probe: Redis;
const exchange = new FakeUpstream();
const rpc = new FakeUpstream();
const apps: FastifyInstance[] = [];
const bases: string[] = [];
/** What the fake exchange answers for a venue symbol (BTCUSDT), when a test changes it. */
const replies = new Map<string, FakeReply>();

beforeAll(async () => {
  await Promise.all([exchange.start(), rpc.start()]);
  exchange.route(`GET ${TICKER}`, (req) => replies.get(req.query.get('symbol')!) ?? { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json'), delayMs: UPSTREAM_DELAY_MS });
  rpc.route('POST /', recordedJsonRpc);
  redis = await startRedis();
  probe = new Redis(redis.url);
  probe.on('error', () => {}); // while the test stops Redis
  for (let i = 0; i < 2; i++) {
    const { app } = await makeApp({
      ...TEST_KEY_ENV,
      METRICS_TOKEN: TOKEN,
      BINANCE_SPOT_BASE_URL: exchange.url,
      RPC_URL_ETHEREUM: rpc.url,
      CACHE_TTL_PRICE_S: '60',
      CACHE_TTL_CHAIN_HEAD_S: '60',
      UPSTREAM_DEADLINE_MS: String(DEADLINE_MS),
      HEDGE_DELAY_MS: '30000', // no fallback venue asked while the exchange is merely slow
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    apps.push(app);
    bases.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  }
  // Both connected, both subscribed to the end-of-load messages.
  await until(async () => apps.every((a) => a.services.backends.redis!.connections.client.status === 'ready'));
  await until(async () => ((await probe.pubsub('NUMSUB', FILLED_CHANNEL)) as [string, number])[1] === 2);
}, 60_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  probe?.disconnect();
  await redis?.stop();
  await Promise.all([exchange.stop(), rpc.stop()]);
});

async function until(check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const get = (base: string, path: string) => fetch(`${base}${path}`, { headers: TEST_KEY });

interface Answer {
  data: Record<string, unknown>;
  meta: { sources: { cached: boolean; fetched_at: string }[] };
}
/** The envelope of an answer. */
const body = async (res: Response | Promise<Response>): Promise<Answer> => (await (await res).json()) as Answer;
const callsFor = (symbol: string) => exchange.calls(TICKER).filter((r) => r.query.get('symbol') === symbol).length;
/** The cache entries in Redis (not the locks). */
const l2Entries = async () => (await probe.keys(`${L2_KEY_PREFIX}*`)).filter((k) => !k.slice(L2_KEY_PREFIX.length).startsWith('lock:'));
const redisStatus = async (base: string) => ((await (await fetch(`${base}/v1/status`)).json()) as { data: { backends: { redis: { status: string } } } }).data.backends.redis.status;

interface CacheCounts {
  l1: number;
  l2: number;
  coalesced: number;
  misses: number;
}

async function cacheCounts(base: string): Promise<CacheCounts> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const s = parseScrape(await res.text());
  const hits = (layer: string) => s.value('marketgate_cache_hits_total', { layer });
  return { l1: hits('l1'), l2: hits('l2'), coalesced: hits('coalesced'), misses: s.value('marketgate_cache_misses_total') };
}

/** How each instance's cache counters moved while `act` ran. */
async function countsMoved(act: () => Promise<unknown>): Promise<CacheCounts[]> {
  const before = await Promise.all(bases.map(cacheCounts));
  await act();
  const after = await Promise.all(bases.map(cacheCounts));
  return after.map((a, i) => ({ l1: a.l1 - before[i]!.l1, l2: a.l2 - before[i]!.l2, coalesced: a.coalesced - before[i]!.coalesced, misses: a.misses - before[i]!.misses }));
}

describe('one response cache across two instances (Redis)', () => {
  it('200 identical cold requests spread over both instances make one upstream call', async () => {
    let answers: Response[] = [];
    const moved = await countsMoved(async () => {
      answers = await Promise.all(Array.from({ length: 200 }, (_, i) => get(bases[i % 2]!, '/v1/price?symbol=BTC')));
    });
    expect(answers.map((r) => r.status)).toEqual(Array(200).fill(200));
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as { data: { price: number }; meta: { sources: { fetched_at: string }[] } }[];
    expect(new Set(bodies.map((b) => b.data.price)).size).toBe(1);
    expect(bodies[0]!.data.price).toBe(Number(recorded<{ lastPrice: string }>('binance__spot_ticker_24hr_BTCUSDT.json').lastPrice));
    // One load, so one fetched_at everywhere.
    expect(new Set(bodies.map((b) => b.meta.sources[0]!.fetched_at)).size).toBe(1);
    expect(callsFor('BTCUSDT')).toBe(1);
    // Across both instances: one lookup loaded, the 199 others were answered without an upstream call.
    const sum = (k: keyof CacheCounts) => moved[0]![k] + moved[1]![k];
    expect(sum('misses')).toBe(1);
    expect(sum('l1') + sum('l2') + sum('coalesced')).toBe(199);
    // The instance that did not load got its value through Redis (by waiting for the load, or from L2).
    const other = moved.findIndex((m) => m.misses === 0);
    expect(moved[other]!.l2 + moved[other]!.coalesced).toBeGreaterThanOrEqual(1);
    expect(await l2Entries()).toHaveLength(1);
  });

  it('an instance waits for the load another has in flight (counted as coalesced), then answers with it', async () => {
    const first = get(bases[0]!, '/v1/price?symbol=ETH');
    await until(() => callsFor('ETHUSDT') === 1); // instance 0 is loading, under the lock
    let second: Response | undefined;
    const moved = await countsMoved(async () => {
      second = await get(bases[1]!, '/v1/price?symbol=ETH');
    });
    const [a, b] = [await body(first), await body(second!)];
    expect(b.data).toEqual(a.data);
    expect(b.meta.sources[0]!.fetched_at).toBe(a.meta.sources[0]!.fetched_at);
    expect(b.meta.sources[0]!.cached).toBe(false); // a load it waited for, as with coalescing in one process
    expect(callsFor('ETHUSDT')).toBe(1);
    expect(moved[1]).toEqual({ l1: 0, l2: 0, coalesced: 1, misses: 0 });
  });

  it('a value one instance loaded is served by the other from Redis, without an upstream call', async () => {
    const a = await body(get(bases[0]!, '/v1/price?symbol=SOL'));
    expect(a.meta.sources[0]!.cached).toBe(false);
    let b: Answer | undefined;
    const moved = await countsMoved(async () => {
      b = await body(get(bases[1]!, '/v1/price?symbol=SOL'));
    });
    expect(callsFor('SOLUSDT')).toBe(1);
    expect(b!.data).toEqual(a.data);
    expect(b!.meta.sources[0]!).toMatchObject({ cached: true, fetched_at: a.meta.sources[0]!.fetched_at });
    expect(moved[1]).toEqual({ l1: 0, l2: 1, coalesced: 0, misses: 0 });
    // Now in instance 1's own cache too: the next request there is an L1 hit.
    const again = await countsMoved(() => get(bases[1]!, '/v1/price?symbol=SOL'));
    expect(again[1]).toEqual({ l1: 1, l2: 0, coalesced: 0, misses: 0 });
  });

  it('values that are not JSON read back the same: a block with a bigint base fee, loaded by one instance, served by the other', async () => {
    const blocks = () => rpc.requests.filter((r) => r.body.includes('eth_getBlockByNumber')).length;
    const a = await get(bases[0]!, '/v1/chain-block?block=latest');
    expect(a.status).toBe(200);
    const first = await body(a);
    const b = await get(bases[1]!, '/v1/chain-block?block=latest');
    expect(b.status).toBe(200);
    const second = await body(b);
    expect(blocks()).toBe(1);
    expect(second.meta.sources[0]!.cached).toBe(true);
    expect(second.data).toEqual(first.data);
    // The recorded block's baseFeePerGas, a hex quantity parsed into a bigint and cached as one.
    const recordedFee = BigInt(recorded<{ result: { baseFeePerGas: string } }>('evm-rpc__eth_getBlockByNumber.json').result.baseFeePerGas);
    expect(second.data.base_fee_per_gas_wei).toBe(recordedFee.toString());
    expect(second.data.number).toBe(28);
  });

  it('a failed load is stored in neither level: the next request, on either instance, asks the upstream again', async () => {
    replies.set('XRPUSDT', { status: 500, body: { code: 0, msg: 'internal error' } });
    const entries = (await l2Entries()).length;
    const failed = await get(bases[0]!, '/v1/price?symbol=XRP');
    expect(failed.status).toBe(502);
    expect(callsFor('XRPUSDT')).toBe(1);
    expect(await l2Entries()).toHaveLength(entries);
    // Both at once while it still fails: each answers with its own failure, none waits out the deadline.
    const started = performance.now();
    const both = await Promise.all(bases.map((base) => get(base, '/v1/price?symbol=XRP')));
    expect(both.map((r) => r.status)).toEqual([502, 502]);
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
    expect(callsFor('XRPUSDT')).toBe(3);
    expect(await l2Entries()).toHaveLength(entries);
    // The exchange recovers: the other instance asks it (nothing was cached), and the answer is stored.
    replies.delete('XRPUSDT');
    const ok = await get(bases[1]!, '/v1/price?symbol=XRP');
    expect(ok.status).toBe(200);
    expect(callsFor('XRPUSDT')).toBe(4);
    expect(await l2Entries()).toHaveLength(entries + 1);
  });

  it('an L1 hit does not touch Redis', async () => {
    await get(bases[0]!, '/v1/price?symbol=DOGE');
    const gets = async () => Number(/cmdstat_get:calls=(\d+)/.exec(await probe.info('commandstats'))?.[1] ?? 0);
    // The load's lock is released after its answer (its compare-and-delete script runs a GET): wait for it.
    await until(async () => (await probe.keys(`${L2_KEY_PREFIX}lock:*`)).length === 0);
    const before = await gets();
    const moved = await countsMoved(async () => {
      for (let i = 0; i < 20; i++) expect((await get(bases[0]!, '/v1/price?symbol=DOGE')).status).toBe(200);
    });
    expect(moved[0]!.l1).toBe(20);
    expect(await gets()).toBe(before);
  });
});

describe('when Redis fails', () => {
  it('hung (SIGSTOP): a cold request answers within REDIS_TIMEOUT_MS plus the upstream time, a cached one at once', async () => {
    await get(bases[0]!, '/v1/price?symbol=ADA'); // cached in instance 0 before Redis hangs
    replies.set('LTCUSDT', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') }); // no upstream delay
    redis.pause();
    try {
      const started = performance.now();
      const cold = await get(bases[1]!, '/v1/price?symbol=LTC');
      expect(cold.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(REDIS_TIMEOUT_MS + 1500);
      // An L1 hit: never asks Redis, so it does not wait for it.
      let hit: Response | undefined;
      const moved = await countsMoved(async () => {
        hit = await get(bases[0]!, '/v1/price?symbol=ADA');
      });
      expect(hit!.status).toBe(200);
      expect((await body(hit!)).meta.sources[0]!.cached).toBe(true);
      expect(moved[0]).toEqual({ l1: 1, l2: 0, coalesced: 0, misses: 0 });
      expect(await redisStatus(bases[1]!)).toBe('degraded');
    } finally {
      redis.resume();
    }
    // Redis answers again on the same connection: the next lookups use it, and the health says so.
    await get(bases[1]!, '/v1/price?symbol=BNB');
    await until(async () => (await redisStatus(bases[1]!)) === 'ok');
    const other = await body(get(bases[0]!, '/v1/price?symbol=BNB'));
    expect(other.meta.sources[0]!.cached).toBe(true);
    expect(callsFor('BNBUSDT')).toBe(1);
  }, 30_000);

  it('stopped: requests answer promptly from each instance\'s cache or the upstream; once Redis is back, L2 works again', async () => {
    await get(bases[0]!, '/v1/price?symbol=AVAX');
    replies.set('DOTUSDT', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
    await redis.kill();
    try {
      await until(async () => (await redisStatus(bases[0]!)) === 'degraded');
      let started = performance.now();
      const hit = await get(bases[0]!, '/v1/price?symbol=AVAX');
      expect(hit.status).toBe(200);
      expect((await body(hit)).meta.sources[0]!.cached).toBe(true);
      expect(performance.now() - started).toBeLessThan(2000);
      // Cold on both instances: each loads itself (no lock to take, nothing waits for a connection).
      started = performance.now();
      const cold = await Promise.all(bases.map((base) => get(base, '/v1/price?symbol=DOT')));
      expect(cold.map((r) => r.status)).toEqual([200, 200]);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(callsFor('DOTUSDT')).toBe(2);
      // Each instance's own cache still serves.
      const cached = await Promise.all(bases.map(async (base) => (await body(get(base, '/v1/price?symbol=DOT'))).meta.sources[0]!.cached));
      expect(cached).toEqual([true, true]);
      expect(callsFor('DOTUSDT')).toBe(2);
    } finally {
      await redis.restart();
    }
    await until(async () => (await redisStatus(bases[0]!)) === 'ok' && (await redisStatus(bases[1]!)) === 'ok');
    await until(async () => ((await probe.pubsub('NUMSUB', FILLED_CHANNEL)) as [string, number])[1] === 2);
    const a = await body(get(bases[0]!, '/v1/price?symbol=LINK'));
    const b = await body(get(bases[1]!, '/v1/price?symbol=LINK'));
    expect(a.meta.sources[0]!.cached).toBe(false);
    expect(b.meta.sources[0]!).toMatchObject({ cached: true, fetched_at: a.meta.sources[0]!.fetched_at });
    expect(callsFor('LINKUSDT')).toBe(1);
  }, 60_000);
});
