// Prints one plain closing line, "N passed, N failed, N skipped", that CI systems can read
// whatever runner they know. A test file that fails to load (a syntax or import error, a throwing
// beforeAll) has no test results of its own: it counts as one failure, and so does every
// unhandled error of the run, so a broken suite can never print "0 failed".
import type { Reporter, SerializedError, TestModule } from 'vitest/node';

export function summarise(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>) {
  let passed = 0;
  let failed = unhandledErrors.length;
  let skipped = 0;
  for (const m of modules) {
    let failedHere = 0;
    for (const t of m.children.allTests()) {
      const state = t.result().state;
      if (state === 'passed') passed++;
      else if (state === 'failed') failedHere++;
      else skipped++;
    }
    // The file itself failed (collection error, hook error) beyond its failed tests.
    if (failedHere === 0 && (m.state() === 'failed' || m.errors().length > 0)) failedHere = 1;
    failed += failedHere;
  }
  return { passed, failed, skipped };
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const { passed, failed, skipped } = summarise(modules, unhandledErrors);
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
