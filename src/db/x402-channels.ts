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
