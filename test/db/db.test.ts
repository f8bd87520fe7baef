// The ledger database, run the same against both implementations: the embedded PGlite (in a temp
// DATA_DIR) and a real PostgreSQL server started by the test (Debian's binaries). Migrations, the
// payments ledger, the payment-identifier store and the usage counter's flushes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { MIGRATIONS, migrate } from '../../src/db/migrations.ts';
import { openDatabase, type DatabaseSettings } from '../../src/db/open.ts';
import { SqlPaymentIdStore, type ClaimRequest } from '../../src/db/payment-ids.ts';
import type { VerifiedPayment } from '../../src/db/payment-rows.ts';
import { resolvePayment } from '../../src/db/payment-reports.ts';
import { PaymentRecords } from '../../src/db/payments.ts';
import { DatabaseService, DatabaseUnavailableError } from '../../src/db/service.ts';
import { UsageCounter } from '../../src/db/usage.ts';
import { instrument, memoryLog, pgliteDataDir, removeTempDirs, serviceFor, serviceOver, tempDir } from '../db-helpers.ts';
import { startPostgres, type TestPostgres } from '../servers/postgres.ts';

let server: TestPostgres | undefined;
let databases = 0;
afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/**
 * Fresh settings of each kind, with no schema yet: a new PGlite cluster (a copy of a bare initdb; the
 * first start's initdb itself is tested through `npm start` in server.test.ts), or a new database on
 * the test server.
 */
const BACKENDS: { name: string; fresh: (timeoutMs?: number) => Promise<DatabaseSettings> }[] = [
  { name: 'PGlite', fresh: async (timeoutMs = 2000) => ({ dataDir: await pgliteDataDir(), url: undefined, timeoutMs }) },
  {
    name: 'PostgreSQL server',
    fresh: async (timeoutMs = 2000) => {
      server ??= await startPostgres();
      return { dataDir: tempDir(), url: await server.createDatabase(`t${++databases}`), timeoutMs };
    },
  },
];

const payment = (over: Partial<VerifiedPayment> = {}): VerifiedPayment => ({
  requestId: 'req-1',
  route: '/v1/price',
  resourceUrl: 'http://127.0.0.1:3000/v1/price',
  scheme: 'exact',
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  amountRequired: '1000',
  payTo: '0x1111111111111111111111111111111111111111',
  payer: '0x2222222222222222222222222222222222222222',
  payloadHash: 'a'.repeat(64),
  facilitator: 'https://facilitator.example',
  ...over,
});

const TX = `0x${'ab'.repeat(32)}`;
const TX2 = `0x${'ac'.repeat(32)}`;
const nonce = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
/** A claim of a payment identifier by `owner`, for `payloadHash`, for the price of BTC, leased for a minute. */
const claim = (payloadHash: string, over: Partial<ClaimRequest> = {}): ClaimRequest => ({ payloadHash, request: 'GET /v1/price?symbol=BTC', owner: 'o1', leaseUntil: Date.now() + 60_000, ...over });

describe.each(BACKENDS)('$name', ({ name, fresh }) => {
  let settings: DatabaseSettings;
  let db: Database;
  let service: DatabaseService;

  beforeAll(async () => {
    settings = await fresh();
  }, 120_000);
  afterAll(async () => {
    await service?.close();
  });

  it('a fresh database: recordVerified fails fast (503) while the database is still opening, then migrations apply once', async () => {
    const log = memoryLog();
    service = serviceFor({ ...settings, timeoutMs: name === 'PGlite' ? 300 : 2000 }, log);
    service.start();
    if (name === 'PGlite') {
      // Opening PGlite takes seconds: a payment cannot wait for it.
      const started = performance.now();
      const err = await new PaymentRecords(service, { log }).recordVerified(payment()).catch((e) => e);
      expect(err).toBeInstanceOf(DatabaseUnavailableError);
      expect(err).toMatchObject({ statusCode: 503, source: 'database', message: 'database did not answer within 300 ms' });
      expect(performance.now() - started).toBeLessThan(1500);
    }
    db = await service.ready();
    expect(db.kind).toBe(name === 'PGlite' ? 'pglite' : 'postgres');
    const applied = await db.query<{ id: number; name: string }>('SELECT id, name FROM schema_migrations ORDER BY id');
    expect(applied).toEqual(MIGRATIONS.map((m) => ({ id: m.id, name: m.name })));
    // Idempotent: run again (twice at once), nothing left to apply, nothing applied twice.
    expect(await Promise.all([migrate(db), migrate(db)])).toEqual([[], []]);
    expect(await db.query('SELECT count(*) AS n FROM schema_migrations')).toEqual([{ n: MIGRATIONS.length }]);
    const tables = await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'api_key_changes',
      'api_key_imports',
      'api_keys',
      'key_usage',
      'payment_identifiers',
      'payments',
      'schema_migrations',
      'x402_authorizations',
      'x402_batch_events',
      'x402_channels',
    ]);
    // The change marker starts at version 0, one row.
    expect(await db.query('SELECT id, version FROM api_key_changes')).toEqual([{ id: 1, version: 0 }]);
  }, 120_000);

  it('a migration edited after it shipped is refused', async () => {
    const edited = [{ ...MIGRATIONS[0]!, statements: ['CREATE TABLE sneaky (a int)'] }, ...MIGRATIONS.slice(1)];
    await expect(migrate(db, edited)).rejects.toThrow('migration 1 (payments) differs from the one applied to this database: migrations are append-only');
    expect(await db.query("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'sneaky'")).toEqual([{ n: 0 }]);
  });

  it('both return the same values: int8 as a number, numeric as a string, date as its text, timestamptz as a Date, jsonb parsed', async () => {
    const [row] = await db.query<Record<string, unknown>>(
      "SELECT 9007199254740991::int8 AS i, '123456789012345678901234567890'::numeric(78,0) AS n, '2026-11-24'::date AS d, '2026-11-24T01:02:03Z'::timestamptz AS t, '{\"a\":1}'::jsonb AS j",
    );
    expect(row).toEqual({ i: 9007199254740991, n: '123456789012345678901234567890', d: '2026-11-24', t: new Date('2026-11-24T01:02:03Z'), j: { a: 1 } });
  });

  describe('payments ledger', () => {
    it('one row per attempt, updated through its lifecycle: verified → settled; verified → cancelled; verified → unknown → resolved', async () => {
      const log = memoryLog();
      const ledger = new PaymentRecords(service, { log });
      const a = await ledger.recordVerified(payment({ requestId: 'req-a', paymentIdentifier: 'pay_0123456789abcdef', authorizationNonce: `0x${'01'.repeat(32)}`, validBefore: new Date('2026-11-24T02:00:00Z') }));
      let [row] = await ledger.list({ status: 'verified' }).then((rows) => rows.filter((r) => r.id === a));
      expect(row).toMatchObject({
        id: a,
        request_id: 'req-a',
        route: '/v1/price',
        status: 'verified',
        amount_required: '1000',
        payer: '0x2222222222222222222222222222222222222222',
        payment_identifier: 'pay_0123456789abcdef',
        authorization_nonce: `0x${'01'.repeat(32)}`,
        valid_before: '2026-11-24T02:00:00.000Z',
        tx_hash: null,
        settled_amount: null,
        finished_at: null,
      });

      expect(await ledger.recordSettled(a, { txHash: TX, settledAmount: '1000' })).toBe('recorded');
      [row] = (await ledger.list()).filter((r) => r.id === a);
      expect(row).toMatchObject({ status: 'settled', tx_hash: TX, settled_amount: '1000', error_reason: null });
      expect(row!.finished_at).not.toBeNull();
      // A late, contradictory outcome does not rewrite a settled payment.
      expect(await ledger.recordCancelled(a, 'handler_failed')).toBe('recorded');
      expect((await ledger.list()).find((r) => r.id === a)).toMatchObject({ status: 'settled', tx_hash: TX });
      expect(log.text()).toMatch(/already final; outcome not applied/);

      const b = await ledger.recordVerified(payment({ requestId: 'req-b', route: '/v1/ohlcv' }));
      await ledger.recordCancelled(b, 'handler_failed: 502');
      expect((await ledger.list()).find((r) => r.id === b)).toMatchObject({ status: 'cancelled', error_reason: 'handler_failed: 502', tx_hash: null });

      const c = await ledger.recordVerified(payment({ requestId: 'req-c' }));
      await ledger.recordUnknown(c, { errorReason: 'settle timed out after 10000 ms' });
      expect((await ledger.list()).find((r) => r.id === c)).toMatchObject({ status: 'unknown', error_reason: 'settle timed out after 10000 ms', finished_at: null });
      // Reconciled by hand: the transfer did land. The amount defaults to the amount required.
      expect(await service.use((d) => resolvePayment(d, c, { status: 'settled', txHash: TX2 }))).toEqual({ id: c, previous: 'unknown', status: 'settled' });
      expect((await ledger.list()).find((r) => r.id === c)).toMatchObject({ status: 'settled', settled_amount: '1000', tx_hash: TX2 });
      await expect(service.use((d) => resolvePayment(d, c, { status: 'cancelled', reason: 'x' }))).rejects.toMatchObject({ statusCode: 409 });
      await expect(service.use((d) => resolvePayment(d, 'nope', { status: 'cancelled', reason: 'x' }))).rejects.toMatchObject({ statusCode: 404 });

      // One row per attempt, three attempts.
      const all = await ledger.list();
      expect(all.filter((r) => [a, b, c].includes(r.id))).toHaveLength(3);
      expect(all.map((r) => r.id).slice(0, 3)).toEqual([c, b, a]); // newest first
      expect(ledger.stats()).toEqual({ final_write_failures: 0, final_writes_pending: 0, final_writes_lost: 0 });

      const summary = await ledger.summary();
      const today = new Date().toISOString().slice(0, 10);
      expect(summary.filter((s) => s.day === today)).toEqual([
        { day: today, route: '/v1/ohlcv', status: 'cancelled', asset: payment().asset, count: 1, amount_required: '1000', amount_settled: '0' },
        { day: today, route: '/v1/price', status: 'settled', asset: payment().asset, count: 2, amount_required: '2000', amount_settled: '2000' },
      ]);
      expect(await ledger.list({ status: 'cancelled' })).toEqual([expect.objectContaining({ id: b })]);
      expect(await ledger.list({ since: new Date(Date.now() + 60_000) })).toEqual([]);
      await ledger.close();
    });

    it('a verified row the database refuses for any reason is the same 503 for the gate', async () => {
      const err = await new PaymentRecords(service, { log: memoryLog() }).recordVerified(payment({ amountRequired: '1,000' })).catch((e) => e);
      expect(err).toBeInstanceOf(DatabaseUnavailableError);
      expect(err).toMatchObject({ statusCode: 503, source: 'database' });
      expect(err.message).toMatch(/^payment ledger could not record the payment: invalid input syntax for type numeric/);
    });

    it('a final status that cannot be written is not an error for the payer: it is retried until written, logged loudly and counted', async () => {
      const flaky = instrument(await service.ready());
      const log = memoryLog();
      const ledger = new PaymentRecords(serviceOver(flaky, { log }), { log, retryDelaysMs: [100] });
      const id = await ledger.recordVerified(payment({ requestId: 'req-flaky' }));
      let failures = 3;
      flaky.failWhen = (sql) => sql.includes('UPDATE payments') && failures-- > 0;

      expect(await ledger.recordSettled(id, { txHash: TX, settledAmount: '1000' })).toBe('queued');
      expect(ledger.stats()).toEqual({ final_write_failures: 1, final_writes_pending: 1, final_writes_lost: 0 });
      expect(log.lines.find((l) => l.level === 'error')?.msg).toBe(`payment ledger: could not record the settled status of payment ${id}; retrying (the payer's answer is unaffected)`);
      expect(log.lines.find((l) => l.level === 'error')?.obj).toMatchObject({ payment: id, outcome: { status: 'settled', txHash: TX, settledAmount: '1000' } });

      await expect.poll(() => ledger.stats().final_writes_pending, { timeout: 5000 }).toBe(0);
      expect(ledger.stats()).toEqual({ final_write_failures: 3, final_writes_pending: 0, final_writes_lost: 0 });
      expect((await ledger.list()).find((r) => r.id === id)).toMatchObject({ status: 'settled', tx_hash: TX });
      expect(log.text()).toMatch(/final status recorded after retrying/);
      expect(flaky.statements.filter((s) => s.startsWith('UPDATE payments'))).toHaveLength(4);

      // Still failing at shutdown: given up, logged in full at error level, counted as lost.
      const id2 = await ledger.recordVerified(payment({ requestId: 'req-lost' }));
      flaky.failWhen = (sql) => sql.includes('UPDATE payments');
      expect(await ledger.recordSettled(id2, { txHash: TX, settledAmount: '1000' })).toBe('queued');
      await ledger.close();
      expect(ledger.stats()).toMatchObject({ final_writes_lost: 1 });
      expect(log.lines.at(-1)).toMatchObject({ level: 'error', obj: { payment: id2, outcome: { status: 'settled', txHash: TX } } });
      expect(log.lines.at(-1)!.msg).toMatch(/LOST the settled status of payment .*record it by hand with npm run payments -- resolve/);
    });

    it('one settled row per authorization: a second row of the same (network, payer, nonce) becomes a cancelled duplicate, never revenue', async () => {
      const ledger = new PaymentRecords(service, { log: memoryLog() });
      const TX3 = `0x${'d3'.repeat(32)}`;
      const auth = { authorizationNonce: nonce(0xd0b1e), validBefore: new Date('2026-11-24T02:00:00Z') };
      // A crash between verify and settle left the first row; the same authorization was verified again, then settled.
      const first = await ledger.recordVerified(payment({ requestId: 'req-crashed', paymentIdentifier: 'pay_first_identifier_01', ...auth }));
      const second = await ledger.recordVerified(payment({ requestId: 'req-again', paymentIdentifier: 'pay_second_identifier_1', ...auth }));
      await ledger.recordSettled(second, { txHash: TX3, settledAmount: '1000', answered: true });
      // The chain then says the first row's authorization was used (in that same transaction).
      await ledger.recordSettled(first, { txHash: TX3, settledAmount: '1000', chain: 'authorizationState = true' });
      const rows = (await ledger.list()).filter((r) => r.id === first || r.id === second);
      expect(rows.find((r) => r.id === second)).toMatchObject({ status: 'settled', tx_hash: TX3, settled_amount: '1000' });
      expect(rows.find((r) => r.id === first)).toMatchObject({ status: 'cancelled', settled_amount: null, tx_hash: null, chain_state: 'authorizationState = true' });
      expect(rows.find((r) => r.id === first)!.error_reason).toBe(`duplicate: this authorization is settled on payment ${second} (tx ${TX3}); one transfer, counted once`);
      // The database itself refuses a second settled row, whoever writes it.
      const third = await ledger.recordVerified(payment({ requestId: 'req-third', ...auth }));
      await expect(service.use((d) => d.query(`UPDATE payments SET status = 'settled' WHERE id = $1`, [third]))).rejects.toMatchObject({ code: '23505' });
      // An operator neither: the transaction is recorded already, and so is the authorization's settlement.
      await expect(service.use((d) => resolvePayment(d, third, { status: 'settled', txHash: TX3 }))).rejects.toMatchObject({
        statusCode: 409,
        message: `transaction ${TX3} is already recorded on payment ${second} (settled): one transfer is counted once`,
      });
      await expect(service.use((d) => resolvePayment(d, third, { status: 'settled', txHash: `0x${'ee'.repeat(32)}` }))).rejects.toMatchObject({
        statusCode: 409,
        message: `payment ${third}'s authorization is already settled on another payment: one transfer is counted once`,
      });
      expect((await ledger.list()).find((r) => r.id === third)!.status).toBe('verified');
      await ledger.close();
    });

    it('a payment whose answer never went out is found by its payload; its answer is claimed once, and never after its authorization answered', async () => {
      const ledger = new PaymentRecords(service, { log: memoryLog() });
      const auth = { authorizationNonce: nonce(0xa115), validBefore: new Date('2026-11-24T02:00:00Z'), payloadHash: 'c'.repeat(64) };
      const id = await ledger.recordVerified(payment({ requestId: 'req-unanswered', ...auth }));
      expect((await ledger.unanswered('c'.repeat(64)))?.id).toBe(id);
      expect(await ledger.unanswered('d'.repeat(64))).toBeUndefined();
      await ledger.recordSettled(id, { txHash: `0x${'a1'.repeat(32)}`, settledAmount: '1000', chain: 'landed' });
      expect(await ledger.unanswered('c'.repeat(64))).toMatchObject({ id, status: 'settled', answered_at: null });
      expect(await Promise.all([ledger.claimAnswer(id), ledger.claimAnswer(id)])).toEqual(expect.arrayContaining([true, false]));
      expect(await ledger.unanswered('c'.repeat(64))).toBeUndefined();
      // Answered through another row of the same authorization: this one is not answered again either.
      const other = { authorizationNonce: nonce(0xa116), validBefore: new Date('2026-11-24T02:00:00Z') };
      const x = await ledger.recordVerified(payment({ requestId: 'req-x', payloadHash: 'e'.repeat(64), ...other }));
      const y = await ledger.recordVerified(payment({ requestId: 'req-y', payloadHash: 'f'.repeat(64), ...other }));
      await ledger.recordSettled(y, { txHash: `0x${'a2'.repeat(32)}`, settledAmount: '1000', answered: true });
      expect(await ledger.unanswered('e'.repeat(64))).toBeUndefined();
      expect(await ledger.claimAnswer(x)).toBe(false);
      await ledger.close();
    });

    it('what a payer wrote is stored with its control characters escaped', async () => {
      const ledger = new PaymentRecords(service, { log: memoryLog() });
      const id = await ledger.recordVerified(payment({ requestId: 'req-escape', resourceUrl: 'http://x/v1/price\n2026-01-01 settled \u001b[31mforged', authorizationNonce: 'not-a-nonce\r\n' }));
      await ledger.recordSettleFailed(id, { errorReason: 'refused:\nsettled 0xforged\u2028' });
      expect((await ledger.list()).find((r) => r.id === id)).toMatchObject({
        resource_url: 'http://x/v1/price\\x0a2026-01-01 settled \\x1b[31mforged',
        authorization_nonce: 'not-a-nonce\\x0d\\x0a',
        error_reason: 'refused:\\x0asettled 0xforged\\u2028',
      });
      await ledger.close();
    });

    it.runIf(name !== 'PGlite')('migration 7 keeps the first of two settled rows of one authorization that an earlier version recorded', async () => {
      const { openPostgres } = await import('../../src/db/postgres.ts');
      const target = await openPostgres({ url: (await fresh()).url!, timeoutMs: 5000 });
      expect(await migrate(target, MIGRATIONS.slice(0, 6))).toEqual([1, 2, 3, 4, 5, 6]);
      const insert = (id: string, at: string) =>
        target.query(
          `INSERT INTO payments (id, request_id, route, resource_url, scheme, network, asset, amount_required, pay_to, payer, payload_hash, authorization_nonce,
             status, tx_hash, settled_amount, facilitator, verified_at, updated_at, finished_at)
           VALUES ($1, $1, '/v1/price', 'u', 'exact', 'eip155:8453', 'a', 1000, 'p', '0x2222222222222222222222222222222222222222', 'h', $2, 'settled', $3, 1000, 'f', $4, $4, $4)`,
          [id, nonce(7), `0x${id.padStart(64, '0')}`, at],
        );
      await insert('1', '2026-11-01T00:00:00Z');
      await insert('2', '2026-11-01T00:05:00Z');
      expect(await migrate(target)).toEqual([7, 8, 9, 10]);
      expect(await target.query('SELECT id, status, settled_amount::text AS settled_amount FROM payments ORDER BY id')).toEqual([
        { id: '1', status: 'settled', settled_amount: '1000' },
        { id: '2', status: 'cancelled', settled_amount: null },
      ]);
      await target.close();
    });
  });

  describe('payment-identifier store', () => {
    it('concurrent begins of one id claim it once; the others see it in flight', async () => {
      const store = new SqlPaymentIdStore(service);
      // A second service with its own connections (a second instance, on a server).
      const other = name === 'PGlite' ? service : serviceFor(settings);
      const otherStore = new SqlPaymentIdStore(other);
      const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? otherStore : store).begin('pay_concurrent_0001', claim('h1', { owner: `o${i}` }))));
      expect(claims.filter((c) => c.state === 'new')).toHaveLength(1);
      expect(claims.filter((c) => c.state === 'in_flight')).toEqual(Array(11).fill({ state: 'in_flight', samePayload: true, request: 'GET /v1/price?symbol=BTC', leaseLive: true }));
      if (other !== service) await other.close();
    });

    it('done: the stored response and the request it was for; abandon (by its holder only) lets a retry pay', async () => {
      const store = new SqlPaymentIdStore(service);
      expect(await store.begin('pay_lifecycle_0001', claim('h1'))).toEqual({ state: 'new' });
      expect(await store.begin('pay_lifecycle_0001', claim('h2', { owner: 'o2' }))).toMatchObject({ state: 'in_flight', samePayload: false });
      const response = { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'payment-response': 'eyJ4Ijoi' }, body: '{"data":{"price":1}}' };
      await store.complete('pay_lifecycle_0001', response);
      expect(await store.begin('pay_lifecycle_0001', claim('h1', { owner: 'o3' }))).toEqual({ state: 'done', samePayload: true, request: 'GET /v1/price?symbol=BTC', response });
      expect(await store.begin('pay_lifecycle_0001', claim('h2', { owner: 'o3', request: 'GET /v1/market-clock' }))).toEqual({ state: 'done', samePayload: false, request: 'GET /v1/price?symbol=BTC', response });

      expect(await store.begin('pay_abandoned_0001', claim('h1'))).toEqual({ state: 'new' });
      await store.abandon('pay_abandoned_0001', 'someone-else');
      expect((await store.begin('pay_abandoned_0001', claim('h1', { owner: 'o2' }))).state).toBe('in_flight');
      await store.abandon('pay_abandoned_0001', 'o1');
      expect(await store.begin('pay_abandoned_0001', claim('h1', { owner: 'o2' }))).toEqual({ state: 'new' });
      // abandon never forgets a finished payment.
      await store.abandon('pay_lifecycle_0001', 'o1');
      expect((await store.begin('pay_lifecycle_0001', claim('h1', { owner: 'o4' }))).state).toBe('done');
    });

    it('a lapsed lease is taken over by the same payment for the same request only; kept ids are never given to another payment', async () => {
      // In the future: the stores of the tests before this one sweep with the real clock, in the
      // background on their own connection, and a sweep that lands late must not take these rows.
      let now = Date.now() + 365 * 24 * 3600_000;
      const store = new SqlPaymentIdStore(service, { clock: () => now });
      const at = (payloadHash: string, over: Partial<ClaimRequest> = {}) => claim(payloadHash, { leaseUntil: now + 5000, ...over });
      expect(await store.begin('pay_expiry_00000001', at('h1'))).toEqual({ state: 'new' });
      now += 4000;
      expect(await store.begin('pay_expiry_00000001', at('h1', { owner: 'o2' }))).toMatchObject({ state: 'in_flight', samePayload: true, leaseLive: true });
      await store.renew('pay_expiry_00000001', 'o1', now + 5000);
      now += 4000;
      expect(await store.begin('pay_expiry_00000001', at('h1', { owner: 'o2' }))).toMatchObject({ state: 'in_flight', leaseLive: true });
      now += 2000; // the lease has lapsed: its holder is presumed gone
      // Another payment, or the same one for another request: never (the first may have been charged).
      expect(await store.begin('pay_expiry_00000001', at('h2', { owner: 'o2' }))).toMatchObject({ state: 'in_flight', samePayload: false, leaseLive: false });
      expect(await store.begin('pay_expiry_00000001', at('h1', { owner: 'o2', request: 'GET /v1/price?symbol=ETH' }))).toMatchObject({
        state: 'in_flight',
        samePayload: true,
        request: 'GET /v1/price?symbol=BTC',
      });
      // The same payment takes it over; its old holder can no longer renew, keep or release it.
      expect(await store.begin('pay_expiry_00000001', at('h1', { owner: 'o2' }))).toEqual({ state: 'new' });
      await store.abandon('pay_expiry_00000001', 'o1');
      await store.renew('pay_expiry_00000001', 'o1', now + 60_000);
      expect(await store.begin('pay_expiry_00000001', at('h1', { owner: 'o3' }))).toMatchObject({ state: 'in_flight', leaseLive: true });
      // Kept (money may have moved): the lease ends at once, for the same payment only.
      await store.keep('pay_expiry_00000001', 'o2');
      expect(await store.begin('pay_expiry_00000001', at('h2', { owner: 'o3' }))).toMatchObject({ state: 'in_flight', samePayload: false });
      expect(await store.begin('pay_expiry_00000001', at('h1', { owner: 'o3' }))).toEqual({ state: 'new' });
      await store.complete('pay_expiry_00000001', { status: 200, headers: {}, body: 'x' });
      now += 24 * 3600_000 - 1000;
      expect((await store.begin('pay_expiry_00000001', at('h2'))).state).toBe('done');
      now += 2000; // remembered for 24 hours, then forgotten
      expect(await store.begin('pay_expiry_00000001', at('h3'))).toEqual({ state: 'new' });
    });
  });

  /** `db` whose first transaction waits until `decide` says whether it fails (like a lost connection) or runs; the next ones run at once. */
  function firstTransactionWaits(db: Database): { slow: Database; decide: (fail: boolean) => void } {
    let decide!: (fail: boolean) => void;
    const decided = new Promise<boolean>((resolve) => (decide = resolve));
    let first = true;
    const slow: Database = {
      kind: db.kind,
      query: (sql, params) => db.query(sql, params),
      close: async () => {},
      transaction: async (fn) => {
        if (first && ((first = false), await decided)) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
        return db.transaction(fn);
      },
    };
    return { slow, decide };
  }

  describe('usage counter', () => {
    it('N calls become one row write per key, route and UTC day, in one statement', async () => {
      const counted = instrument(await service.ready());
      const usage = new UsageCounter(serviceOver(counted), { flushMs: 60_000, log: memoryLog(), clock: () => Date.parse('2026-11-24T12:00:00Z') });
      for (let i = 0; i < 50; i++) usage.count('key_a', '/v1/price');
      for (let i = 0; i < 20; i++) usage.count('key_a', '/v1/ohlcv');
      for (let i = 0; i < 7; i++) usage.count('key_b', '/v1/price');
      expect(await usage.flush()).toBe(3);
      const writes = counted.statements.filter((s) => s.startsWith('INSERT INTO key_usage'));
      expect(writes).toHaveLength(1);
      expect(writes[0]!.match(/\(\$\d+, \$\d+::date, \$\d+, \$\d+\)/g)).toHaveLength(3);
      for (let i = 0; i < 5; i++) usage.count('key_a', '/v1/price');
      expect(await usage.flush()).toBe(1);
      expect(await usage.flush()).toBe(0); // nothing new: no write at all
      expect(counted.statements.filter((s) => s.startsWith('INSERT INTO key_usage'))).toHaveLength(2);
      const rows = await counted.query('SELECT key_id, day, route, calls FROM key_usage WHERE day = $1 ORDER BY key_id, route', ['2026-11-24']);
      expect(rows).toEqual([
        { key_id: 'key_a', day: '2026-11-24', route: '/v1/ohlcv', calls: 20 },
        { key_id: 'key_a', day: '2026-11-24', route: '/v1/price', calls: 55 },
        { key_id: 'key_b', day: '2026-11-24', route: '/v1/price', calls: 7 },
      ]);
      // Read back: stored rows plus what is not flushed yet.
      usage.count('key_a', '/v1/price');
      expect(await usage.usageOf('key_a')).toEqual({ today: 76, month: 76, today_by_route: { '/v1/ohlcv': 20, '/v1/price': 56 } });
    });

    it('calls on each side of UTC midnight count on their own day', async () => {
      let now = Date.parse('2026-09-30T23:59:59.500Z');
      const usage = new UsageCounter(service, { flushMs: 60_000, log: memoryLog(), clock: () => now });
      usage.count('key_m', '/v1/price');
      usage.count('key_m', '/v1/price');
      now += 1000;
      usage.count('key_m', '/v1/price');
      expect(await usage.flush()).toBe(2);
      const rows = await (await service.ready()).query("SELECT day, calls FROM key_usage WHERE key_id = 'key_m' ORDER BY day");
      expect(rows).toEqual([
        { day: '2026-09-30', calls: 2 },
        { day: '2026-10-01', calls: 1 },
      ]);
    });

    it('a flush that fails keeps its counts for the next one', async () => {
      const flaky = instrument(await service.ready());
      const usage = new UsageCounter(serviceOver(flaky), { flushMs: 60_000, log: memoryLog(), clock: () => Date.parse('2026-10-02T12:00:00Z') });
      for (let i = 0; i < 4; i++) usage.count('key_c', '/v1/rates');
      flaky.failWhen = () => true;
      await expect(usage.flush()).rejects.toBeInstanceOf(DatabaseUnavailableError);
      expect(usage.unflushed).toBe(4);
      flaky.failWhen = undefined;
      usage.count('key_c', '/v1/rates');
      expect(await usage.flush()).toBe(1);
      expect(await flaky.query("SELECT calls FROM key_usage WHERE key_id = 'key_c'")).toEqual([{ calls: 5 }]);
    });

    // DB_TIMEOUT_MS gives up on a flush, not on the transaction it started: that one may still commit.
    it.each([
      ['commits after it was given up on: its counts are not counted again', false, 0],
      ['fails after it was given up on: its counts are kept for the next flush', true, 3],
    ] as const)('a flush whose transaction %s', async (_what, fails, keptAfter) => {
      const key = fails ? 'key_late_fail' : 'key_late_commit';
      const db = await service.ready();
      const { slow, decide } = firstTransactionWaits(db);
      const usage = new UsageCounter(serviceOver(slow, { timeoutMs: 100 }), { flushMs: 60_000, log: memoryLog(), clock: () => Date.parse('2026-10-03T12:00:00Z') });
      for (let i = 0; i < 3; i++) usage.count(key, '/v1/price');
      await expect(usage.flush()).rejects.toBeInstanceOf(DatabaseUnavailableError);
      expect(usage.unflushed).toBe(0); // its fate is not known yet
      decide(fails);
      const rows = () => db.query(`SELECT calls FROM key_usage WHERE key_id = '${key}'`);
      for (let i = 0; i < 100 && (fails ? usage.unflushed === 0 : (await rows()).length === 0); i++) await new Promise((r) => setTimeout(r, 20));
      expect(usage.unflushed).toBe(keptAfter);
      usage.count(key, '/v1/price');
      expect(await usage.flush()).toBe(1);
      expect(await rows()).toEqual([{ calls: 4 }]);
      expect((await usage.usageOf(key)).today).toBe(4);
    });

    it('shutdown waits for a flush given up on: counts its transaction gives back are written, not lost', async () => {
      const db = await service.ready();
      const { slow, decide } = firstTransactionWaits(db);
      const usage = new UsageCounter(serviceOver(slow, { timeoutMs: 300 }), { flushMs: 60_000, log: memoryLog(), clock: () => Date.parse('2026-10-04T12:00:00Z') });
      for (let i = 0; i < 2; i++) usage.count('key_late_close', '/v1/price');
      await expect(usage.flush()).rejects.toBeInstanceOf(DatabaseUnavailableError);
      const closing = usage.close();
      setTimeout(() => decide(true), 50); // its transaction fails while the server shuts down
      await closing;
      expect(await db.query("SELECT calls FROM key_usage WHERE key_id = 'key_late_close'")).toEqual([{ calls: 2 }]);
    });
  });
});

describe('several instances starting at once on one PostgreSQL server', () => {
  it('migrate once: the advisory lock makes the others wait, then find nothing to do', async () => {
    server ??= await startPostgres();
    const settings: DatabaseSettings = { dataDir: tempDir(), url: await server.createDatabase(`race${++databases}`), timeoutMs: 10_000 };
    const opened = await Promise.allSettled(Array.from({ length: 4 }, () => openDatabase(settings)));
    const instances = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    try {
      expect(opened.filter((o) => o.status === 'rejected')).toEqual([]);
      expect(await instances[0]!.query('SELECT id FROM schema_migrations ORDER BY id')).toEqual(MIGRATIONS.map((m) => ({ id: m.id })));
    } finally {
      await Promise.all(instances.map((db) => db.close()));
    }
  }, 60_000);
});

describe('the embedded database when its worker thread dies', () => {
  it('requests get 503 at once, the directory is released, and the next request opens it again', async () => {
    const log = memoryLog();
    const service = serviceFor({ dataDir: await pgliteDataDir(), url: undefined, timeoutMs: 5000 }, log);
    const ledger = new PaymentRecords(service, { log });
    const db = await service.ready();
    const first = await ledger.recordVerified(payment({ requestId: 'before-crash' }));
    // What a crash inside PGlite looks like from outside: its thread ends.
    await (db as unknown as { worker: { worker: { terminate(): Promise<number> } } }).worker.worker.terminate();
    const err = await ledger.recordVerified(payment()).catch((e) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect(err.message).toMatch(/^database unavailable: the PGlite worker exited/);
    expect(log.text()).toMatch(/database lost; it is opened again on the next request/);
    await expect.poll(() => ledger.recordVerified(payment({ requestId: 'after-crash' })).then(() => 'ok', (e) => e.message), { timeout: 60_000, interval: 500 }).toBe('ok');
    expect((await ledger.list()).map((r) => r.request_id)).toEqual(['after-crash', 'before-crash']);
    expect((await ledger.list()).find((r) => r.id === first)).toBeTruthy();
    await service.close();
  }, 120_000);
});

describe('a database that is down', () => {
  it('PGlite directory owned by another running process: recordVerified fails at once, saying so', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'pglite.lock'), `${process.ppid}\n`); // a process that runs: our parent
    const log = memoryLog();
    const service = serviceFor({ dataDir, url: undefined, timeoutMs: 2000 }, log);
    const started = performance.now();
    const err = await new PaymentRecords(service, { log }).recordVerified(payment()).catch((e) => e);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect(err.message).toBe(`database unavailable: ${join(dataDir, 'pglite.lock')} is held by process ${process.ppid}`);
    expect(log.text()).toMatch(/could not record a verified payment; the call is refused before settlement/);
    await service.close();
  });

  it('PostgreSQL server not running: fails at once (connection refused)', async () => {
    server ??= await startPostgres();
    const settings: DatabaseSettings = { dataDir: tempDir(), url: 'postgres://postgres@127.0.0.1:9/none', timeoutMs: 2000 };
    const service = serviceFor(settings);
    const started = performance.now();
    const err = await new PaymentRecords(service, { log: memoryLog() }).recordVerified(payment()).catch((e) => e);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect(err.message).toMatch(/^database unavailable: .*ECONNREFUSED/);
    await service.close();
  }, 60_000);

  it('PostgreSQL server hung (stopped mid-flight): fails within DB_TIMEOUT_MS, and works again once it answers', async () => {
    server ??= await startPostgres();
    const settings: DatabaseSettings = { dataDir: tempDir(), url: await server.createDatabase(`hung${++databases}`), timeoutMs: 500 };
    const service = serviceFor(settings);
    await service.ready();
    const ledger = new PaymentRecords(service, { log: memoryLog() });
    await ledger.recordVerified(payment());
    server.pause();
    try {
      const started = performance.now();
      const err = await ledger.recordVerified(payment()).catch((e) => e);
      const took = performance.now() - started;
      expect(err).toBeInstanceOf(DatabaseUnavailableError);
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(1500);
    } finally {
      server.resume();
    }
    await expect.poll(async () => (await ledger.recordVerified(payment()).then(() => 'ok', (e) => e.message)), { timeout: 10_000, interval: 200 }).toBe('ok');
    await service.close();
  }, 60_000);
});
