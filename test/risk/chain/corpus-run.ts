// Runs the benchmark corpus (corpus.ts): one local chain behind the block-override front (override-node.ts), a
// server whose GoPlus knows none of the tokens (its empty answer: the chain's evidence is all there is), and
// the check asked once per token. Used by bench/risk.ts and test/risk/risk-corpus.test.ts.
import { FakeUpstream } from '../../fakes/fake-upstream.ts';
import { recorded } from '../../fixtures.ts';
import { makeApp } from '../../helpers.ts';
import { buildCorpus, type CorpusToken } from './corpus.ts';
import { startEvidenceWorld } from './evidence-world.ts';
import { overrideNode } from './override-node.ts';

export interface CorpusRow {
  name: string;
  kind: 'trap' | 'control';
  built: string;
  expected: string;
  reported: string;
  ok: boolean;
  score: number | null;
}

export async function runCorpus(log: (m: string) => void = () => {}): Promise<{ rows: CorpusRow[]; buildMs: number; checkMs: number }> {
  const t0 = performance.now();
  const w = await startEvidenceWorld();
  const node = new FakeUpstream();
  const goplus = new FakeUpstream();
  let app: Awaited<ReturnType<typeof makeApp>>['app'] | undefined;
  try {
    const corpus: CorpusToken[] = await buildCorpus(w);
    log(`built ${corpus.length} tokens in ${Math.round(performance.now() - t0)} ms`);
    await Promise.all([node.start(), goplus.start()]);
    const front = overrideNode(w.chain.rpcUrl, () => ({ simulateV1: 'emulate', callOverride: 'emulate' }));
    node.route('POST /', async (req) => ({ body: await front(req.body), headers: { 'content-type': 'application/json' } }));
    goplus.route('GET /api/v1/token_security/1', { body: recorded('goplus__empty_result.json') });
    ({ app } = await makeApp({
      GOPLUS_BASE_URL: goplus.url,
      RPC_URL_ETHEREUM: node.url,
      DEX_ROUTER_ETHEREUM: w.router,
      WRAPPED_NATIVE_ETHEREUM: w.weth,
      STABLE_TOKEN_ETHEREUM: w.stable,
      LP_LOCKERS_ETHEREUM: w.locker,
      RISK_RATE_LIMIT: '100000',
      UPSTREAM_DEADLINE_MS: '20000',
    }));
    const t1 = performance.now();
    const rows: CorpusRow[] = [];
    for (const c of corpus) {
      const res = await app.inject({ url: `/risk/v1/token-risk?chain=ethereum&address=${c.token}` });
      if (res.statusCode !== 200) throw new Error(`${c.name}: HTTP ${res.statusCode} ${res.body}`);
      const data = res.json().data;
      const { ok, reported } = data.onchain === null ? { ok: false, reported: `onchain null: ${data.onchain_unavailable}` } : c.judge(data);
      rows.push({ name: c.name, kind: c.kind, built: c.built, expected: c.expected, reported, ok, score: data.score });
    }
    return { rows, buildMs: t1 - t0, checkMs: performance.now() - t1 };
  } finally {
    await app?.close();
    await Promise.all([node.stop(), goplus.stop()]);
    await w.close();
  }
}

/** The table as Markdown, then detection per trap and false alarms on controls. */
export function corpusTable(rows: CorpusRow[]): string {
  const lines = ['| token | kind | how it was built | expected | reported | score | ok |', '|---|---|---|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.name} | ${r.kind} | ${r.built} | ${r.expected} | ${r.reported.replace(/\|/g, '\\|')} | ${r.score ?? 'null'} | ${r.ok ? 'yes' : '**no**'} |`);
  const traps = rows.filter((r) => r.kind === 'trap');
  const controls = rows.filter((r) => r.kind === 'control');
  lines.push('', `Traps detected by their signal: ${traps.filter((r) => r.ok).length} of ${traps.length}.`);
  lines.push(`False alarms (controls rated high): ${controls.filter((r) => !r.ok).length} of ${controls.length}.`);
  return lines.join('\n');
}
