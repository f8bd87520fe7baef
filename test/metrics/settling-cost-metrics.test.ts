// /metrics' settling costs: per scheme and network, read from the ledger when scraped (at most every 30 s), as
// counters (paid calls, settlements, fees, revenue) and the net revenue as a gauge.
import { describe, expect, it } from 'vitest';
import type { SettlingCostRow } from '../../src/db/settling-costs.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';

const ROWS: SettlingCostRow[] = [
  { scheme: 'exact', network: 'eip155:8453', paid_calls: 10_000, settlements: 10_000, free_settlements: 1000, facilitator_fees_usd: '9', revenue_usd: '10', net_usd: '1' },
  { scheme: 'batch-settlement', network: 'eip155:8453', paid_calls: 10_000, settlements: 130, free_settlements: 130, facilitator_fees_usd: '0', revenue_usd: '10', net_usd: '10' },
];

describe('settling costs on /metrics', () => {
  it('each family per scheme and network, from one ledger reading for scrapes close together', async () => {
    const metrics = createMetrics(true, { providers: [], version: 'test' });
    let readings = 0;
    metrics.settlingCosts(async () => (readings++, ROWS));
    const text = await metrics.exposition();
    expect(text).toContain('# TYPE marketgate_x402_paid_calls_total counter');
    expect(text).toContain('marketgate_x402_paid_calls_total{scheme="exact",network="eip155:8453"} 10000');
    expect(text).toContain('marketgate_x402_settlements_total{scheme="batch-settlement",network="eip155:8453"} 130');
    expect(text).toContain('marketgate_x402_facilitator_fees_usd_total{scheme="exact",network="eip155:8453"} 9');
    expect(text).toContain('marketgate_x402_revenue_usd_total{scheme="batch-settlement",network="eip155:8453"} 10');
    expect(text).toContain('# TYPE marketgate_x402_net_revenue_usd gauge');
    expect(text).toContain('marketgate_x402_net_revenue_usd{scheme="exact",network="eip155:8453"} 1');
    await metrics.exposition();
    expect(readings).toBe(1);
  });

  it('a ledger that cannot be read shows no series, and is asked again at the next scrape', async () => {
    const metrics = createMetrics(true, { providers: [], version: 'test' });
    let fail = true;
    metrics.settlingCosts(async () => {
      if (fail) throw new Error('database down');
      return ROWS;
    });
    expect(await metrics.exposition()).not.toContain('marketgate_x402_paid_calls_total{');
    fail = false;
    expect(await metrics.exposition()).toContain('marketgate_x402_paid_calls_total{scheme="exact",network="eip155:8453"} 10000');
  });
});
