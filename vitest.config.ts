import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Generous: on the 2-core machine with other work running (load average 8-10), end-to-end
    // tests that open PGlite, sync from anvil and compute took 60-70 s (2026-11-27). A limit is
    // there to end a hung test, not to time a slow one: speed targets live in bench/.
    testTimeout: 240_000,
    hookTimeout: 300_000,
    // Database tests share one real Postgres database (TEST_DATABASE_URL); each test file
    // creates its own schema, so files may run in parallel.
    pool: 'forks',
    maxWorkers: 2,
  },
});
