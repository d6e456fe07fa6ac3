import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Database tests share one real Postgres database (TEST_DATABASE_URL); each test file
    // creates its own schema, so files may run in parallel.
    pool: 'forks',
    maxWorkers: 2,
  },
});
