import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Upper bounds for a test or hook that hangs, not durations any test waits out: tests wait for events. A
    // loaded 2-core machine (another workload on both cores) runs everything three to five times slower than a
    // quiet one, and a test that passes in 5 s must not fail there; tests that start processes, compile or
    // create databases set their own, longer bounds.
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Two test files at once on the 2-core machine (vitest's default is one fewer than the cores: one). Most files
    // wait on processes, sockets and timers rather than the CPU; measured on the whole suite: 665 s with one,
    // 423 s with two, all passing in both.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
