// Where the server keeps its batch-settlement payment channels: the ledger database (PGlite or PostgreSQL),
// through the shared Database interface, as the @x402/evm ChannelStorage the scheme calls on every payment.
//
// A channel record holds what the server is owed and can prove: the cumulative amount charged, the latest
// voucher the payer signed (amount + signature, what a claim needs) and a mirror of the on-chain state.
// Losing it forfeits every unclaimed voucher of the channel, which is why it lives in the ledger database and
// not in process memory. The SDK's contract for `updateChannel` is an atomic read-modify-write per channel
// across every instance that shares the storage: here one transaction that locks the channel's row.
import type { Channel, ChannelStorage, ChannelUpdateResult } from '@x402/evm/batch-settlement/server';
import type { Database } from './database.ts';

// The table is `x402_channels` (src/db/migrations.ts): one row per channel ever reserved; `state` is the
// SDK's Channel record as JSON, NULL once the channel is closed (cooperatively refunded). Rows are never
// deleted: the row is the lock that serialises updates of its channel, and a deleted row cannot be waited on.

const CHANNEL_ID = /^0x[0-9a-fA-F]{64}$/;

function key(channelId: string): string {
  if (!CHANNEL_ID.test(channelId)) throw new Error(`not a channel id: ${channelId}`);
  return channelId.toLowerCase();
}

/** The batch-settlement channel storage over the ledger database. */
export function createChannelStorage(db: Database): ChannelStorage {
  return {
    async get(channelId) {
      const rows = await db.query<{ state: Channel | null }>('SELECT state FROM x402_channels WHERE channel_id = $1', [key(channelId)]);
      return rows[0]?.state ?? undefined;
    },

    async list() {
      const rows = await db.query<{ state: Channel }>('SELECT state FROM x402_channels WHERE state IS NOT NULL ORDER BY channel_id');
      return rows.map((r) => r.state);
    },

    async updateChannel(channelId, update): Promise<ChannelUpdateResult> {
      const id = key(channelId);
      return db.transaction(async (tx) => {
        // Make sure the row exists, then lock it: concurrent updates of one channel (from any instance) queue here.
        await tx.query('INSERT INTO x402_channels (channel_id) VALUES ($1) ON CONFLICT (channel_id) DO NOTHING', [id]);
        const rows = await tx.query<{ state: Channel | null }>('SELECT state FROM x402_channels WHERE channel_id = $1 FOR UPDATE', [id]);
        const current = rows[0]?.state ?? undefined;
        const next = update(current);
        if (next === current) return { channel: current, status: 'unchanged' };
        await tx.query('UPDATE x402_channels SET state = $2::jsonb, updated_at = now() WHERE channel_id = $1', [id, next ? JSON.stringify(next) : null]);
        if (!next) return { channel: undefined, status: current ? 'deleted' : 'unchanged' };
        return { channel: next, status: 'updated' };
      });
    },
  };
}

/** A channel's last admitted voucher (its signature), the request it paid for and the answer sent: what a retry of it gets. */
export interface KeptAnswer {
  signature: string;
  request: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A channel's lease taken: its state and last answer as last written; or held by another instance, until when (the database's time). */
export type LeaseTaken =
  /** `lapsed`: its last holder let its lease run out (it died, or lost the ledger) instead of releasing it. */
  | { taken: true; state: Channel | undefined; answer: KeptAnswer | undefined; lapsed: boolean }
  | { taken: false; owner: string; untilMs: number };

/**
 * Takes the lease of a channel for `owner` for `leaseMs` when no other instance holds it (none, released, or
 * lapsed); otherwise marks the channel wanted, so that its holder hands it over at its next write.
 */
export async function takeChannelLease(db: Database, channelId: string, owner: string, leaseMs: number): Promise<LeaseTaken> {
  const id = key(channelId);
  return db.transaction(async (tx) => {
    await tx.query('INSERT INTO x402_channels (channel_id) VALUES ($1) ON CONFLICT (channel_id) DO NOTHING', [id]);
    const [row] = await tx.query<{ state: Channel | null; last_answer: KeptAnswer | null; lease_owner: string | null; held: boolean; lapsed: boolean; until_ms: string | null }>(
      `SELECT state, last_answer, lease_owner, (lease_owner IS NOT NULL AND lease_owner <> $2 AND lease_until > now()) AS held,
         (lease_owner IS NOT NULL AND lease_owner <> $2 AND lease_until <= now()) AS lapsed,
         (extract(epoch FROM lease_until) * 1000)::bigint::text AS until_ms
       FROM x402_channels WHERE channel_id = $1 FOR UPDATE`,
      [id, owner],
    );
    if (row!.held) {
      await tx.query('UPDATE x402_channels SET lease_wanted_at = now() WHERE channel_id = $1', [id]);
      return { taken: false, owner: row!.lease_owner!, untilMs: Number(row!.until_ms) };
    }
    await tx.query(`UPDATE x402_channels SET lease_owner = $2, lease_until = now() + make_interval(secs => $3::double precision / 1000), lease_wanted_at = NULL WHERE channel_id = $1`, [id, owner, leaseMs]);
    return { taken: true, state: row!.state ?? undefined, answer: row!.last_answer ?? undefined, lapsed: row!.lapsed };
  });
}

/**
 * Writes a held channel's state and renews its lease (`release`: gives it up); false when `owner` no longer holds
 * it (it lapsed and another instance took it). `wanted`: another instance asked for it since it was taken.
 */
export async function writeChannelLease(
  db: Database,
  channelId: string,
  owner: string,
  state: Channel | undefined,
  answer: KeptAnswer | undefined,
  leaseMs: number,
  release: boolean,
): Promise<{ held: boolean; wanted: boolean }> {
  const rows = await db.query<{ wanted: boolean }>(
    `UPDATE x402_channels SET state = $3::jsonb, last_answer = $6::jsonb, updated_at = now(),
       lease_owner = CASE WHEN $5 THEN NULL ELSE lease_owner END,
       lease_until = CASE WHEN $5 THEN NULL ELSE now() + make_interval(secs => $4::double precision / 1000) END,
       lease_wanted_at = CASE WHEN $5 THEN NULL ELSE lease_wanted_at END
     WHERE channel_id = $1 AND lease_owner = $2
     RETURNING lease_wanted_at IS NOT NULL AS wanted`,
    [key(channelId), owner, state ? JSON.stringify(state) : null, leaseMs, release, answer ? JSON.stringify(answer) : null],
  );
  return { held: rows.length > 0, wanted: rows[0]?.wanted ?? false };
}

/** Of `channelIds` held by `owner`, those another instance has asked for since. */
export async function wantedChannelLeases(db: Database, channelIds: string[], owner: string): Promise<string[]> {
  if (channelIds.length === 0) return [];
  const rows = await db.query<{ channel_id: string }>('SELECT channel_id FROM x402_channels WHERE channel_id = ANY($1::text[]) AND lease_owner = $2 AND lease_wanted_at IS NOT NULL', [
    channelIds.map(key),
    owner,
  ]);
  return rows.map((r) => r.channel_id);
}

/** A channel's state and last answer as last written, and whether an instance other than `owner` holds its lease; undefined: no row. */
export async function peekChannelLease(db: Database, channelId: string, owner: string): Promise<{ state: Channel | undefined; answer: KeptAnswer | undefined; leasedElsewhere: boolean } | undefined> {
  const [row] = await db.query<{ state: Channel | null; last_answer: KeptAnswer | null; elsewhere: boolean }>(
    'SELECT state, last_answer, (lease_owner IS NOT NULL AND lease_owner <> $2 AND lease_until > now()) AS elsewhere FROM x402_channels WHERE channel_id = $1',
    [key(channelId), owner],
  );
  return row && { state: row.state ?? undefined, answer: row.last_answer ?? undefined, leasedElsewhere: row.elsewhere };
}

/** Where a channel's single writer keeps its lease and written state (channel-lease.ts): the ledger database. */
export interface LeaseStore {
  /** The state and answer last written, and whether another instance holds the lease now; undefined: no such channel. */
  peek(channelId: string, owner: string): Promise<{ state: Channel | undefined; answer: KeptAnswer | undefined; leasedElsewhere: boolean } | undefined>;
  list(): Promise<Channel[]>;
  take(channelId: string, owner: string, leaseMs: number): Promise<LeaseTaken>;
  write(channelId: string, owner: string, state: Channel | undefined, answer: KeptAnswer | undefined, leaseMs: number, release: boolean): Promise<{ held: boolean; wanted: boolean }>;
  /** Of `channelIds` (held by `owner`), the ones another instance asked for. */
  wanted(channelIds: string[], owner: string): Promise<string[]>;
}

/** The leases of the ledger database `db`, as an instance's LeasedChannels takes them. */
export function channelLeaseStore(db: Database): LeaseStore {
  const ledger = createChannelStorage(db);
  return {
    peek: (id, owner) => peekChannelLease(db, id, owner),
    list: () => ledger.list(),
    take: (id, owner, ms) => takeChannelLease(db, id, owner, ms),
    write: (id, owner, state, answer, ms, release) => writeChannelLease(db, id, owner, state, answer, ms, release),
    wanted: (ids, owner) => wantedChannelLeases(db, ids, owner),
  };
}
