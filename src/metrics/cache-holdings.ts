// What the in-process caches hold, read when /metrics is scraped: bytes and entries of the upstream answers
// (src/upstream/cache.ts) and of the answers served again from them (src/edge/answer-memo.ts), and what each let go.
import type { Registry } from 'prom-client';
import type { AnswerMemoStats } from '../edge/answer-memo.ts';
import type { CacheStats } from '../upstream/cache.ts';

/** What the in-process caches hold: the upstream answers, and the answers served again from them. */
export interface CacheHoldings {
  upstream: CacheStats;
  answers: AnswerMemoStats;
}

const STORES = ['upstream', 'answers'] as const;

/** Registers the cache's gauges and counter; `held` is undefined until the app has told where to read them. */
export function cacheHoldingMetrics(prom: typeof import('prom-client'), prefix: string, registers: Registry[], held: () => CacheHoldings | undefined): void {
  const { Counter, Gauge } = prom;
  new Gauge({
    name: `${prefix}cache_bytes`,
    help: 'Bytes held (estimated heap size) by the in-process caches: upstream answers, and the answers served again from them (the fast lane); CACHE_MAX_BYTES bounds them.',
    labelNames: ['store'],
    registers,
    collect() {
      const h = held();
      if (h) for (const store of STORES) this.set({ store }, h[store].bytes);
    },
  });
  new Gauge({
    name: `${prefix}cache_entries`,
    help: 'Entries held by the in-process caches, by store.',
    labelNames: ['store'],
    registers,
    collect() {
      const h = held();
      if (h) for (const store of STORES) this.set({ store }, h[store].entries);
    },
  });
  new Counter({
    name: `${prefix}cache_evictions_total`,
    help: 'Entries let go by the in-process caches, by store and reason: size (to stay within CACHE_MAX_BYTES or CACHE_MAX_ENTRIES), expired (freed when their time was up).',
    labelNames: ['store', 'reason'],
    registers,
    collect() {
      this.reset();
      const h = held();
      if (h) {
        for (const store of STORES) {
          this.inc({ store, reason: 'size' }, h[store].evicted);
          this.inc({ store, reason: 'expired' }, h[store].expired);
        }
      }
    },
  });
}
