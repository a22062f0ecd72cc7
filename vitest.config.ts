import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The suites mostly wait on loopback servers, so files run one more at a time than there are
    // cores (vitest's default is cores - 1: one file at a time on a 2-core machine, 4.5 min per
    // driver; three at a time, 2.6–2.8 min with the same results).
    maxWorkers: availableParallelism() + 1,
  },
});
