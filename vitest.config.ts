import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Tests start real servers (sandbox, PostgreSQL, Redis); two cores do not take more at once.
    maxWorkers: 2,
  },
});
