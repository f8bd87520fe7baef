// The claims of `exact` authorizations (src/db/authorization-claims.ts), on the embedded database: one holder at a
// time; a lease that lapses is taken over; `used` refuses every later claim; a release frees it; a lapse ends the
// lease at once; a long-expired row is claimed anew. A claim says whether the authorization was new to the table
// (`fresh`: no earlier request of it may have moved money), which is what lets an exact payment skip /verify.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationClaims, CLAIM_KEPT_AFTER_EXPIRY_MS } from '../../src/db/authorization-claims.ts';
import type { DatabaseService } from '../../src/db/service.ts';
import { pgliteDataDir, removeTempDirs, serviceFor } from '../db-helpers.ts';

let db: DatabaseService;
let now = Date.parse('2026-12-07T06:00:00Z');
let claims: AuthorizationClaims;
const validBefore = () => now + 60_000;
let n = 0;
const key = () => ({ network: 'eip155:8453', payer: '0xAbCd000000000000000000000000000000000001', nonce: `0x${String(++n).padStart(64, '0')}` });

beforeAll(async () => {
  db = serviceFor({ dataDir: await pgliteDataDir(), url: undefined, timeoutMs: 10_000 });
  await db.ready();
  claims = new AuthorizationClaims(db, () => now);
}, 120_000);

afterAll(async () => {
  await db?.close();
  removeTempDirs();
});

describe('authorization claims', () => {
  it('one holder at a time; a lapsed lease is taken over; used refuses every later claim', async () => {
    const k = key();
    expect(await claims.claim(k, 'a', now + 5000, validBefore())).toEqual({ state: 'claimed', fresh: true });
    // Another request (any spelling of the payer) finds it held.
    expect(await claims.claim({ ...k, payer: k.payer.toLowerCase() }, 'b', now + 5000, validBefore())).toEqual({ state: 'in_flight', live: true });
    now += 6000; // the holder died: its lease lapsed
    expect(await claims.claim(k, 'b', now + 5000, validBefore())).toEqual({ state: 'claimed', fresh: false });
    // The old holder can no longer end it; the new one marks it used.
    await claims.used(k, 'a');
    expect(await claims.claim(k, 'c', now + 5000, validBefore())).toEqual({ state: 'in_flight', live: true });
    await claims.used(k, 'b');
    expect(await claims.claim(k, 'c', now + 5000, validBefore())).toEqual({ state: 'used' });
  });

  it('a release frees it (claimed fresh again: nothing was taken); a lapse ends the lease at once (taken over, not fresh); a long-expired row is claimed anew', async () => {
    const k = key();
    expect(await claims.claim(k, 'a', now + 5000, validBefore())).toEqual({ state: 'claimed', fresh: true });
    await claims.release(k, 'a');
    expect(await claims.claim(k, 'b', now + 5000, validBefore())).toEqual({ state: 'claimed', fresh: true });
    await claims.lapse(k, 'b');
    expect(await claims.claim(k, 'c', now + 5000, validBefore())).toEqual({ state: 'claimed', fresh: false });
    const before = validBefore();
    await claims.used(k, 'c');
    now = before + CLAIM_KEPT_AFTER_EXPIRY_MS + 1;
    // (Fresh or not: the sweep in the background may have deleted the row first; its authorization expired long ago.)
    expect(await claims.claim(k, 'd', now + 5000, validBefore())).toMatchObject({ state: 'claimed' });
  });
});
