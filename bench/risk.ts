// npm run bench:risk: the token risk check against a corpus of purpose-built tokens on a local chain
// (test/risk/chain/corpus.ts: each one known trap or one benign control), offline. Prints per token the
// expected finding and what the check reported, then detection per trap and false alarms on controls.
import { corpusTable, runCorpus } from '../test/risk/chain/corpus-run.ts';

const { rows, buildMs, checkMs } = await runCorpus((m) => console.log(m));
console.log(corpusTable(rows));
console.log(`\n${rows.length} tokens; corpus built in ${(buildMs / 1000).toFixed(1)} s, checked in ${(checkMs / 1000).toFixed(1)} s (${Math.round(checkMs / rows.length)} ms per cold check).`);
process.exit(rows.every((r) => r.ok) ? 0 : 1);
